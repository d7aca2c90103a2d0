"""What an admin may change about an app's agents, validated before it is stored.

A config names agents by their ADK `name` (e.g. onemind's `onemind_coach`); `"*"` means every
LLM agent of the app's tree. Models are named from the deployment's allow-list
(`CONFIDANT_AGENT_MODELS.selectable`), never given as URLs or keys: a stored config cannot point
a tree at an endpoint, or a secret, the operator did not already allow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from confidant.errors import BadRequestError, validation_reasons

ALL_AGENTS = "*"
MAX_INSTRUCTION_CHARS = 8000
_NAME = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"
_SERVER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InstructionOverride(_Strict):
    """Text added after the agent's own instruction (`append`) or used instead of it."""

    mode: Literal["append", "replace"] = "append"
    text: str = Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS)


class AgentOverride(_Strict):
    model: str | None = None  # a name of CONFIDANT_AGENT_MODELS.selectable
    instruction: InstructionOverride | None = None
    # The agent keeps only these of its tools (by tool name); None keeps all of them.
    enabled_tools: list[str] | None = None
    max_output_tokens: int | None = Field(default=None, ge=1, le=65_536)


class Limits(_Strict):
    # Model calls per turn (ADK RunConfig.max_llm_calls); the turn ends with an error part past it.
    max_llm_calls: int | None = Field(default=None, ge=1, le=500)
    # Tool calls per turn; past it the turn ends likewise. Both only lower the platform's caps.
    max_tool_calls: int | None = Field(default=None, ge=1, le=500)


class McpServerConfig(_Strict):
    """One MCP server whose tools the app's root agent gets (see confidant/mcp)."""

    name: str  # also the tools' name prefix: `{name}_{tool}`
    transport: Literal["streamable_http", "sse", "stdio"]
    url: str | None = None  # streamable_http / sse
    command: list[str] | None = None  # stdio (local runs only)
    # Only these tools are offered to the model; required, so a server that grows a tool
    # does not silently hand it to the model.
    allowed_tools: list[str] = Field(min_length=1)
    timeout_s: float = Field(default=5.0, gt=0, le=60)  # connect and list tools
    call_timeout_s: float = Field(default=30.0, gt=0, le=300)  # one tool call

    @field_validator("name")
    @classmethod
    def _server_name(cls, value: str) -> str:
        if not _SERVER_NAME.fullmatch(value):
            raise ValueError("must be 1-32 lower-case letters, digits or _ starting with a letter")
        return value

    @model_validator(mode="after")
    def _endpoint(self) -> McpServerConfig:
        if self.transport == "stdio":
            if not self.command or self.url:
                raise ValueError("a stdio server needs `command` (and no `url`)")
        elif not self.url or self.command or not self.url.startswith(("http://", "https://")):
            raise ValueError(f"a {self.transport} server needs an http(s) `url` (and no `command`)")
        return self


class AgentConfig(_Strict):
    """One app's agent configuration (what `PUT /v1/admin/apps/{app}/config` takes)."""

    agents: dict[str, AgentOverride] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    mcp_toolsets: list[McpServerConfig] = Field(default_factory=list)
    note: str = Field(default="", max_length=500)  # why the change was made

    @field_validator("agents")
    @classmethod
    def _agent_names(
        cls, value: dict[str, AgentOverride], info: ValidationInfo
    ) -> dict[str, AgentOverride]:
        for name, override in value.items():
            if name != ALL_AGENTS and not re.fullmatch(_NAME, name):
                raise ValueError(f"{name!r} is not an agent name")
            allowed = (info.context or {}).get("models")
            if override.model and allowed is not None and override.model not in allowed:
                choices = ", ".join(sorted(allowed)) or "none configured"
                raise ValueError(
                    f"agents.{name}.model {override.model!r} is not an allowed model "
                    f"(CONFIDANT_AGENT_MODELS.selectable: {choices})"
                )
        return value

    @field_validator("mcp_toolsets")
    @classmethod
    def _servers(cls, value: list[McpServerConfig], info: ValidationInfo) -> list[McpServerConfig]:
        names = [server.name for server in value]
        if len(set(names)) != len(names):
            raise ValueError("server names must be unique")
        # Policy checks run on what an admin sends (with a context), not on stored versions.
        stdio_allowed = info.context is None or info.context.get("stdio", False)
        if not stdio_allowed and any(s.transport == "stdio" for s in value):
            # A stored command is run as a process: only on a developer's machine, by choice.
            raise ValueError(
                "stdio MCP servers are for local runs only (CONFIDANT_MCP_ALLOW_STDIO=true)"
            )
        return value

    def override_for(self, agent_name: str) -> AgentOverride | None:
        """The agent's own override, else the `*` one."""
        return self.agents.get(agent_name) or self.agents.get(ALL_AGENTS)


class ConfigVersion(_Strict):
    """One stored version: every change, rollbacks included, is a new one."""

    app: str
    version: int
    config: AgentConfig
    author: str
    created_at: datetime
    rolled_back_from: int | None = None  # the version this one restored

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def parse_agent_config(
    body: Any, *, models: Iterable[str] | None = None, allow_stdio: bool = False
) -> AgentConfig:
    """Validate an admin's body; `BadRequestError` with pydantic's reasons when it is wrong."""
    try:
        return AgentConfig.model_validate(
            body, context={"models": None if models is None else set(models), "stdio": allow_stdio}
        )
    except ValidationError as exc:
        raise BadRequestError(f"invalid agent config: {validation_reasons(exc)}") from None

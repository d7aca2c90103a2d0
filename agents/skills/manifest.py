"""Skill manifests: `skills/<id>/skill.yaml` plus `skills/<id>/protocols/<protocol>.yaml`.

    id: career
    title: Career coach
    description: ...
    instruction: |        the skill's fragment of the agent's instruction
      ...
    sections: [resume, goals]       the state sections the skill keeps (named in the prompt)
    tools: [read_state, write_state, append_to_list]
    protocols: [pivot]              protocol files of this skill (protocols/pivot.yaml)

A new skill is a new folder: the loader finds it, checks its tools against the toolbox and its
protocols against their schema, and the app serves it with no code change.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.protocols.model import ProtocolSpec, load_protocol
from agents.skills.toolbox import PROTOCOL_TOOLS, TOOL_FACTORIES

MANIFEST = "skill.yaml"
PROTOCOLS_DIR = "protocols"


class SkillManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    title: str
    description: str = ""
    instruction: str
    sections: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    protocols: list[str] = Field(default_factory=list)
    loaded_protocols: dict[str, ProtocolSpec] = Field(default_factory=dict, exclude=True)

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, tools: list[str]) -> list[str]:
        unknown = [name for name in tools if name not in TOOL_FACTORIES]
        if unknown:
            raise ValueError(f"unknown tools {unknown}; known: {sorted(TOOL_FACTORIES)}")
        return tools


def load_skill(folder: Path) -> SkillManifest:
    path = folder / MANIFEST
    try:
        manifest = SkillManifest.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except Exception as exc:
        raise ValueError(f"invalid skill manifest {path}: {exc}") from exc
    if manifest.id != folder.name:
        raise ValueError(f"{path}: id {manifest.id!r} must equal the folder name")
    protocols = {}
    for protocol_id in manifest.protocols:
        spec = load_protocol(folder / PROTOCOLS_DIR / f"{protocol_id}.yaml")
        if spec.id != protocol_id:
            raise ValueError(f"{folder}: protocol file {protocol_id}.yaml has id {spec.id!r}")
        protocols[protocol_id] = spec
    if protocols and not set(PROTOCOL_TOOLS) <= set(manifest.tools):
        missing = sorted(set(PROTOCOL_TOOLS) - set(manifest.tools))
        raise ValueError(f"{path}: a skill with protocols needs the protocol tools {missing}")
    manifest.loaded_protocols = protocols
    return manifest


def load_skills(directory: Path) -> dict[str, SkillManifest]:
    """Every skill folder under `directory`, by id (sorted, so the order is stable)."""
    return {
        manifest.id: manifest
        for manifest in (
            load_skill(folder)
            for folder in sorted(directory.iterdir())
            if (folder / MANIFEST).is_file()
        )
    }

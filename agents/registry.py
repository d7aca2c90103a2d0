"""The app registry: every served app declares, in one `AppSpec`, how it plugs in.

Shared code (the chat service, the HTTP layer, warm-up) reads these declarations and never
branches on an app's name. The registry, not the apps, adds the crisis guard: an app cannot
forget it, and an app added later is guarded the day it is registered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.plugins import BasePlugin
from pydantic import BaseModel

from agents.configured import apply_agent_config, turn_config
from agents.deps import AgentDeps, TurnContext
from agents.human_loop import HumanLoop
from agents.safety import CrisisGuardPlugin

TreeBuilder = Callable[[AgentDeps, TurnContext], BaseAgent]
PluginsBuilder = Callable[[AgentDeps, TurnContext], Sequence[BasePlugin]]
# A state delta → the `data-protocol-progress` payload it means, or None.
ProgressReader = Callable[[Mapping[str, Any]], dict[str, Any] | None]
# An HTTP endpoint: `handler(call)` → a Starlette Response, where `call` is the HTTP layer's
# `confidant.http.routing.Call` (request, runtime, user id, validated params and body). Typed
# loosely here because agents/ must not import the HTTP layer.
RouteHandler = Callable[..., Awaitable[Any]]
# What a route answers with one status: a pydantic model (JSON), a media type (a raw body such as
# "text/markdown"), `{media type: model or None}` (several), or None (no body, e.g. 204).
RouteReply = type[BaseModel] | str | Mapping[str, type[BaseModel] | None] | None


@dataclass(frozen=True)
class TurnPrelude:
    """What an app's `before_run` hook decided for one turn, before its tree is built.

    Parts announcing the run's events (e.g. `data-agent` when a specialist starts speaking) are
    not part of the decision: the hook registers a reader with `turn.data_parts.watch`
    (agents/data_parts.py).
    """

    # Streamed as `data-{name}` parts right after `data-session`, and returned in the JSON
    # response under `name` (e.g. the relationship router's `route`).
    data: Mapping[str, Any] = field(default_factory=dict)
    # Merged into `TurnContext.loaded`, so the tree builder and instructions see it.
    loaded: Mapping[str, Any] = field(default_factory=dict)


# Runs after the context is loaded and before anything is streamed (so it may raise a 4xx);
# e.g. a router model call that picks the tree's shape.
BeforeRunHook = Callable[[AgentDeps, TurnContext], Awaitable[TurnPrelude]]


@dataclass(frozen=True)
class SkillInfo:
    """A skill an app serves (shown by `GET /v1/apps` and the web page's picker)."""

    id: str
    title: str
    description: str = ""


@dataclass(frozen=True, eq=False)  # hashed by identity (caches key on it)
class Route:
    """One HTTP operation, declared once: the dispatcher and `/openapi.json` both read it.

    The platform's own endpoints (confidant/http/api.py) and an app's (`AppSpec.routes`, e.g.
    `POST /v1/relationship/analyze`) are declared alike.
    """

    method: str
    # A regular expression matched against the whole path; its named groups are the path
    # parameters (`/v1/things/(?P<thing_id>[a-z0-9]{1,64})`); the document shows `{thing_id}`.
    path: str
    handler: RouteHandler
    name: str = ""  # the operation's summary
    # Path and query parameters, validated before the handler runs (400 with the reasons).
    # None: the path's named groups, as strings.
    params: type[BaseModel] | None = None
    # The JSON body, validated before the handler runs (400 with the reasons; 413 past
    # `body_limit` bytes, None: CONFIDANT_MAX_BODY_BYTES). `parse_body(json, call)` replaces
    # the plain `body.model_validate(json)` where validation needs more (settings, the path).
    body: type[BaseModel] | None = None
    parse_body: Callable[[Any, Any], Any] | None = None
    body_limit: int | None = None
    responses: Mapping[int, RouteReply] = field(default_factory=lambda: {200: None})
    errors: tuple[int, ...] = ()  # statuses besides those every route of its access may give
    access: Literal["user", "admin", "public"] = "user"
    # False: never refused for the request rate (http/limits.py), e.g. the liveness probe.
    rate_limited: bool = True


@dataclass(frozen=True)
class AppSpec:
    """Everything shared code needs to know about one app."""

    name: str
    title: str
    description: str
    build_root: TreeBuilder  # a fresh root agent for one request
    # Context sources loaded per turn, in parallel with the lease (confidant/chat/context.py);
    # their values reach the tree as `TurnContext.loaded[name]`.
    context: tuple[str, ...] = ()
    # Post-turn job kinds each committed turn records in the outbox (e.g. emotion, summary).
    job_kinds: tuple[str, ...] = ()
    progress: ProgressReader | None = None
    skills: tuple[SkillInfo, ...] = ()
    default_skill: str | None = None
    # App-specific chat body fields (e.g. `skill`, `person_id`), validated before the lease.
    options_model: type[BaseModel] | None = None
    plugins: PluginsBuilder | None = None  # plugins besides the crisis guard
    routes: tuple[Route, ...] = ()
    # The app's own stream data parts, `{name: payload model}` for `data-{name}` (None: any
    # JSON object); documented in /openapi.json beside the platform's parts.
    data_parts: Mapping[str, type[BaseModel] | None] = field(default_factory=dict)
    # Pauses for a human (long-running calls): their stream parts and how a request answers
    # them (agents/human_loop.py). None: the app never pauses.
    human_loop: HumanLoop | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Optional per-turn step before the tree is built (see BeforeRunHook / TurnPrelude).
    before_run: BeforeRunHook | None = None
    # How a message on a session still answering is handled when the request does not say:
    # reject | wait | interrupt | enqueue (confidant/chat/busy.py); None = the deployment's.
    busy_policy: str | None = None


class UnknownAppError(KeyError):
    """No app of that name is served."""


_APPS: dict[str, AppSpec] = {}


def register(spec: AppSpec) -> AppSpec:
    if spec.name in _APPS and _APPS[spec.name] is not spec:
        raise ValueError(f"app {spec.name!r} is registered twice")
    _APPS[spec.name] = spec
    return spec


def app_spec(name: str) -> AppSpec:
    spec = _APPS.get(name)
    if spec is None:
        raise UnknownAppError(name)
    return spec


def app_specs() -> tuple[AppSpec, ...]:
    return tuple(_APPS.values())


def app_names() -> tuple[str, ...]:
    return tuple(_APPS)


def guard_plugins(deps: AgentDeps) -> list[BasePlugin]:
    """The safety plugins every app gets, first in line so they run before anything else."""
    return [CrisisGuardPlugin(deps.crisis_detector, classifier=deps.crisis_classifier)]


def build_app(name: str, deps: AgentDeps, turn: TurnContext) -> App:
    """A fresh App (agent tree + plugins) for one request of app `name`, with the app's stored
    agent config (models, instructions, tools: agents/configured.py) applied."""
    spec = app_spec(name)
    extra = list(spec.plugins(deps, turn)) if spec.plugins else []
    config = turn_config(turn)
    toolsets = (
        deps.mcp.toolsets(spec.name, config.mcp_toolsets, turn.user_id)
        if config is not None and config.mcp_toolsets and deps.mcp is not None
        else []
    )
    root = apply_agent_config(spec.build_root(deps, turn), config, deps, toolsets)
    return App(
        name=spec.name,
        root_agent=root,
        plugins=[
            *guard_plugins(deps),
            *extra,
        ],
    )

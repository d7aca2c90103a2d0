"""Agent trees, built per request from process-wide deps and the turn's context."""

from __future__ import annotations

from collections.abc import Callable

from google.adk.apps import App

from agents.deps import AgentDeps, TurnContext
from agents.onemind import APP_NAME as ONEMIND_APP_NAME
from agents.onemind import build_onemind_app

AppBuilder = Callable[[AgentDeps, TurnContext], App]

_BUILDERS: dict[str, AppBuilder] = {
    ONEMIND_APP_NAME: build_onemind_app,
}
APP_NAMES: tuple[str, ...] = tuple(_BUILDERS)


class UnknownAppError(KeyError):
    """No app of that name is served."""


def build_app(name: str, deps: AgentDeps, turn: TurnContext) -> App:
    """A fresh App (agent tree + plugins) for one request of app `name`."""
    builder = _BUILDERS.get(name)
    if builder is None:
        raise UnknownAppError(name)
    return builder(deps, turn)


__all__ = ["APP_NAMES", "AppBuilder", "UnknownAppError", "build_app"]

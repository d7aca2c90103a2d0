"""OneMind (心一): the four-stage inner-integration coach."""

from agents.onemind.agent import APP_NAME, ROOT_AGENT_NAME, build_onemind_app

__all__ = ["APP_NAME", "ROOT_AGENT_NAME", "build_onemind_app"]

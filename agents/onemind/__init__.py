"""OneMind (心一): the four-stage inner-integration coach."""

from agents.onemind.agent import APP_NAME, ROOT_AGENT_NAME, build_onemind_root
from agents.onemind.progress import onemind_progress
from agents.registry import AppSpec, register

SPEC = register(
    AppSpec(
        name=APP_NAME,
        title="OneMind coach",
        description=(
            "Inner-integration coach: awareness → integration → micro-action → solidification, "
            "with wisdom passages and an integration crystal kept in long-term memory."
        ),
        build_root=build_onemind_root,
        context=("memories",),
        progress=onemind_progress,
    )
)

__all__ = ["APP_NAME", "ROOT_AGENT_NAME", "SPEC", "build_onemind_root"]

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
        # The rolling summary carries what left the model's window; memory hits (facts and
        # past crystals ranked for the message) replace the plain list of recent memories.
        context=("summary", "memory_hits"),
        job_kinds=("emotion", "summary", "memory"),
        progress=onemind_progress,
    )
)

__all__ = ["APP_NAME", "ROOT_AGENT_NAME", "SPEC", "build_onemind_root"]

"""Lifecoach (seed 002): skills as data, the unified profile, guided protocols."""

from agents.lifecoach.agent import (
    APP_NAME,
    DEFAULT_SKILL,
    ROOT_AGENT_NAME,
    SKILLS,
    build_lifecoach_root,
)
from agents.lifecoach.options import LifecoachOptions
from agents.protocols.progress import protocol_progress
from agents.protocols.tools import DATA_PARTS
from agents.registry import AppSpec, SkillInfo, register

SPEC = register(
    AppSpec(
        name=APP_NAME,
        title="Life coach",
        description=(
            "One core coach serving skills defined as data (life coaching, career), with the "
            "unified profile as memory and guided protocols such as a one-day life reset."
        ),
        build_root=build_lifecoach_root,
        context=("profile",),
        progress=protocol_progress,
        skills=tuple(
            SkillInfo(id=m.id, title=m.title, description=m.description) for m in SKILLS.values()
        ),
        default_skill=DEFAULT_SKILL,
        options_model=LifecoachOptions,
        data_parts=DATA_PARTS,
    )
)

__all__ = ["APP_NAME", "ROOT_AGENT_NAME", "SKILLS", "SPEC", "build_lifecoach_root"]

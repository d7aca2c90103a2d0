"""Skills as data: a manifest per folder (instruction, tools, protocols) and the shared tools."""

from agents.skills.env import ToolEnv
from agents.skills.manifest import SkillManifest, load_skills
from agents.skills.toolbox import TOOL_FACTORIES, build_tools

__all__ = ["TOOL_FACTORIES", "SkillManifest", "ToolEnv", "build_tools", "load_skills"]

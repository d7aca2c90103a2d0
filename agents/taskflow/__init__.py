"""Taskflow (seed 003): a team that turns a request into a reviewed, approved task."""

from agents.registry import AppSpec, register
from agents.taskflow.agent import APP_NAME, ROOT_AGENT_NAME, build_taskflow_root
from agents.taskflow.human_loop import DATA_PARTS, HUMAN_LOOP
from agents.taskflow.progress import taskflow_progress
from agents.taskflow.schemas import TaskflowOptions

SPEC = register(
    AppSpec(
        name=APP_NAME,
        title="Task assistant",
        description=(
            "Turns a request into a task: collects missing details, classifies it, has it "
            "reviewed, asks for your approval, then writes it to your task system (Notion)."
        ),
        build_root=build_taskflow_root,
        progress=taskflow_progress,
        options_model=TaskflowOptions,
        human_loop=HUMAN_LOOP,
        data_parts=DATA_PARTS,
    )
)

__all__ = ["APP_NAME", "ROOT_AGENT_NAME", "SPEC", "build_taskflow_root"]

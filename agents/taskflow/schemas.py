"""Schemas of every step's output (stored in session state) and of the human's answer."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from confidant.tasks.port import Priority


class Step(StrEnum):
    PLAN = "plan"
    COLLECT = "collect"
    CLASSIFY = "classify"
    REVIEW = "review"
    CONFIRM = "confirm"
    WRITE = "write"
    DONE = "done"
    CANCELLED = "cancelled"


class WorkflowPlan(BaseModel):
    workflow: str
    run_id: str
    steps: list[Step]
    request: str


class TaskDetails(BaseModel):
    """What the collector has gathered; every field optional until the critic is satisfied."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=3, max_length=200)
    description: str | None = Field(default=None, max_length=4000)
    due_date: date | None = None
    tags: list[str] | None = None


class Critique(BaseModel):
    status: Literal["complete", "incomplete"]
    feedback: str
    missing: list[str] = Field(default_factory=list)


class Classification(BaseModel):
    task_type: str = Field(min_length=1)
    priority: Priority
    area: str = Field(min_length=1)
    reasons: str = Field(min_length=1)


class ExpertReview(BaseModel):
    verdict: Literal["sound", "concerns"]
    notes: str


class HumanDecision(BaseModel):
    approved: bool
    answer: str = ""


class HumanResponse(BaseModel):
    """The chat body field `human_response`: the human's answer to a paused step.

    `call_id` names the paused call (from the `data-human-*-needed` part; optional when one call
    is pending). `approved` answers a confirmation; `answer` is free text (missing details, or a
    correction). Without this field, the message text answers the pending call.
    """

    model_config = ConfigDict(extra="forbid")

    call_id: str | None = Field(default=None, max_length=128)
    approved: bool | None = None
    answer: str | None = Field(default=None, max_length=8000)


class TaskflowOptions(BaseModel):
    """Taskflow's own chat body fields (AppSpec.options_model)."""

    model_config = ConfigDict(extra="forbid")

    human_response: HumanResponse | None = None

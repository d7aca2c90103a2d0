"""The relationship engine (seed 001): router, orchestrator and four specialists, pipelines,
strategy endpoints, persons and self-profile."""

from agents.registry import AppSpec, register
from agents.relationship.agent import APP_NAME, build_relationship_root
from agents.relationship.http import ROUTES
from agents.relationship.instructions import (
    EMOTIONS,
    MEMORY_HITS,
    PERSON,
    SELF_PROFILE,
    SUMMARY,
)
from agents.relationship.options import RelationshipOptions
from agents.relationship.router import before_run

# The sources this branch provides. At merge with the post-turn jobs issue, switch `context`
# to INTENDED_CONTEXT: the instructions already render summary / emotions / memory hits when
# they are loaded (and leave their sections out when not).
CONTEXT = (PERSON, SELF_PROFILE)
INTENDED_CONTEXT = (PERSON, SELF_PROFILE, SUMMARY, EMOTIONS, MEMORY_HITS)
# Likewise: set `job_kinds=INTENDED_JOB_KINDS` once the job service has these kinds (the
# emotion job should link its snapshot to the turn's `person_id` option).
INTENDED_JOB_KINDS = ("emotion", "summary", "memory")

SPEC = register(
    AppSpec(
        name=APP_NAME,
        title="Relationship engine",
        description=(
            "Relationship coach: a router picks one specialist (profile, analyzer, strategist, "
            "writer) through an orchestrator, or a two-step pipeline; persons and self-profile "
            "feed every instruction."
        ),
        build_root=build_relationship_root,
        context=CONTEXT,
        options_model=RelationshipOptions,
        routes=ROUTES,
        before_run=before_run,
    )
)

__all__ = ["APP_NAME", "INTENDED_CONTEXT", "INTENDED_JOB_KINDS", "SPEC"]

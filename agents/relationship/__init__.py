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
from agents.relationship.proposals import JOB_KIND as PROPOSAL_JOB_KIND
from agents.relationship.router import DATA_PARTS, before_run

# What a turn loads (in parallel with the lease); the instructions leave a section out when its
# source has no data yet (a new user, a session whose jobs have not run).
CONTEXT = (PERSON, SELF_PROFILE, SUMMARY, EMOTIONS, MEMORY_HITS)
# Post-turn jobs: the emotion snapshot links to the turn's `person_id` option; profile
# proposals are this app's own kind (confidant/relationship/jobs.py).
JOB_KINDS = ("emotion", "summary", "memory", PROPOSAL_JOB_KIND)

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
        job_kinds=JOB_KINDS,
        options_model=RelationshipOptions,
        routes=ROUTES,
        before_run=before_run,
        data_parts=DATA_PARTS,
    )
)

__all__ = ["APP_NAME", "CONTEXT", "JOB_KINDS", "SPEC"]

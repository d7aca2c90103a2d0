"""The relationship app's post-turn job: profile proposals (seed 001's profile extraction).

After a turn, one model call reads the session's recent conversation and files proposed
self-profile and person updates as pending proposals; the user accepts or rejects each through
the proposal endpoints. A redelivered job files nothing twice: the proposal store refuses a
change whose fingerprint is already pending or was rejected (RelationshipService.propose), so
the job is exactly once in effect without a transaction of its own. The job's idempotency mark
is still written by the job service, so a finished job is not run again at all.
"""

from __future__ import annotations

from agents.relationship.proposals import (
    JOB_KIND,
    ProfileProposalExtractor,
    ProfileProposalJob,
)
from confidant.jobs.effects import JobEffect
from confidant.jobs.errors import PoisonJobError
from confidant.jobs.handlers import person_of
from confidant.jobs.service import JobDeps, register_job_handler
from confidant.ports import JobRecord
from confidant.relationship.service import RelationshipService

SERVICE_NAME = "relationship"  # JobDeps.services key of the RelationshipService


async def propose_profile_updates(job: JobRecord, deps: JobDeps) -> JobEffect:
    service = deps.services.get(SERVICE_NAME)
    if not isinstance(service, RelationshipService):
        # A deployment without the relationship app cannot do this job: never retry it forever.
        raise PoisonJobError("profile proposals need the relationship service")
    extractor = ProfileProposalExtractor(deps.extractor.model, service)
    proposals = await ProfileProposalJob(deps.sessions, extractor).run(
        user_id=job.user_id, app=job.app, session_id=job.session_id, person_id=person_of(job)
    )
    return JobEffect(note=f"{len(proposals)} proposal(s) filed")


register_job_handler(JOB_KIND, propose_profile_updates)

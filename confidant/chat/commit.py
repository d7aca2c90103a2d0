"""The turn's commit under a deadline (issue 14, item 3).

The store's client libraries retry an unanswered commit for minutes; the user, whose reply has
already streamed, would watch a spinner that long. After `seconds` (or on a failure that does
not say whether the write was applied) the turn ends with `commit_outcome_unknown`: the write
may still land, or may not. Both are safe: a write that lands later still holds the turn's lease
precondition (it applies whole or not at all), the lease is released or expires, and a resend
of the same message id finds it stored (chat/idempotency.py) rather than storing it twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from confidant.errors import CommitOutcomeUnknownError, ConfidantError, StaleTurnError
from confidant.sessions.records import SessionRecord
from confidant.sessions.service import OpenTurn
from confidant.sessions.store import SessionStore

logger = logging.getLogger(__name__)

UNKNOWN_MESSAGE = (
    "your message may not have been saved (the session store did not confirm it); "
    "check the session before sending it again — resending it with the same message id is safe"
)


async def commit_within(
    turn: OpenTurn, store: SessionStore, seconds: float, **write: Any
) -> SessionRecord:
    """`turn.commit(**write)`, or CommitOutcomeUnknownError after `seconds` or on an
    ambiguous failure. A definite refusal (StaleTurnError: nothing written) passes through."""
    try:
        async with asyncio.timeout(seconds):
            try:
                return await turn.commit(**write)
            except StaleTurnError:
                committed = await _applied_by(turn, store)
                if committed is None:
                    raise
                return committed
    except ConfidantError:
        raise
    except TimeoutError:
        logger.warning("the commit of %s did not answer within %ss", turn.key, seconds)
        raise CommitOutcomeUnknownError(UNKNOWN_MESSAGE) from None
    except Exception as exc:
        # A transport error (unavailable, deadline, reset) may come after the write applied.
        logger.warning("the commit of %s failed: %r", turn.key, exc, exc_info=True)
        raise CommitOutcomeUnknownError(UNKNOWN_MESSAGE) from exc


async def _applied_by(turn: OpenTurn, store: SessionStore) -> SessionRecord | None:
    """The stored record when the session changed *because of this turn*, else None.

    Firestore's client retries a commit whose answer was lost (UNAVAILABLE); the retry then
    fails its precondition on the write it made itself, which reads as "stale". The turn's
    invocation id in the stored tail tells the two apart, so the user is not told "not saved"
    about a reply that is stored."""
    invocations = {event.invocation_id for event in turn.events}
    base = turn.loaded.record
    loaded = await store.load(turn.key)
    if not invocations or loaded is None or not loaded.record.tail:
        return None
    record = loaded.record
    last = json.loads(record.tail[-1]["json"]).get("invocation_id")
    # Exactly one write since the lease, of exactly this turn's events, ending with its own.
    if (
        record.revision == base.revision + 1
        and record.next_seq == base.next_seq + len(turn.events)
        and last in invocations
    ):
        logger.info("the commit of %s was applied by its own retried write", turn.key)
        turn.committed = record
        return record
    return None

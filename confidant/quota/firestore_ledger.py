"""The usage ledger in Firestore: `usage/{uid}/days/{YYYY-MM-DD}` = {turns, tokens}.

Outside `users/{uid}`, on purpose: erasing a user deletes that subtree recursively, and today's
counters must outlive an erase (confidant/quota/gate.py, `QuotaGate.delete_user`), or an erase
would reset the daily quota. Past days are deleted by this ledger's `delete_user`, and by
Firestore's TTL policy on `expire_at` (infra firestore.tf) `USAGE_RETENTION` after the day ends.

Admission is one write, not a transaction: `Increment(1)` on the day's turns (and `Increment(0)`
on its tokens) is applied atomically by the server, which returns the values after the write.
Every concurrent admission therefore sees a distinct turn count; the ones past the limit are
refused and take their count back with `Increment(-1)`. The count never exceeds the number of
admitted turns plus those in the middle of being refused, so at most `max_turns` are admitted,
and under contention nothing retries (a transaction per admission would abort and retry on one
hot document). A refusal whose take-back is lost (the store fails between the two writes)
over-counts by one turn until the day ends.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from google.cloud import firestore
from google.cloud.firestore_v1 import Increment

from confidant.ports import DailyUsage

USAGE = "usage"  # usage/{uid}
DAYS = "days"  # usage/{uid}/days/{YYYY-MM-DD}
_TURNS, _TOKENS = "turns", "tokens"
EXPIRE_AT = "expire_at"
# Only today's counters are read (the quota); past days are kept a while for support questions.
USAGE_RETENTION = timedelta(days=90)
# The server returns transform results in field-path order (the client sorts the transforms).
_TRANSFORM_ORDER = sorted((_TURNS, _TOKENS))


def expire_at(day: str) -> datetime:
    """When Firestore may delete the day's counters: `USAGE_RETENTION` after the day ends."""
    start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    return start + timedelta(days=1) + USAGE_RETENTION


class FirestoreUsageLedger:
    def __init__(self, client: firestore.AsyncClient) -> None:
        self.client = client

    def _doc(self, user_id: str, day: str) -> firestore.AsyncDocumentReference:
        return self._days(user_id).document(day)

    def _days(self, user_id: str) -> firestore.AsyncCollectionReference:
        return self.client.collection(USAGE).document(user_id).collection(DAYS)

    async def admit(
        self, user_id: str, day: str, *, max_turns: int | None, max_tokens: int | None
    ) -> tuple[bool, DailyUsage]:
        ref = self._doc(user_id, day)
        result = await ref.set(
            {_TURNS: Increment(1), _TOKENS: Increment(0), EXPIRE_AT: expire_at(day)}, merge=True
        )
        values = dict(zip(_TRANSFORM_ORDER, result.transform_results, strict=True))
        turns, tokens = int(values[_TURNS].integer_value), int(values[_TOKENS].integer_value)
        admitted = (max_turns is None or turns <= max_turns) and (
            max_tokens is None or tokens < max_tokens
        )
        if not admitted:
            await ref.update({_TURNS: Increment(-1)})
            # Other refusals may not have taken theirs back yet: admitted turns are at most this.
            turns = turns - 1 if max_turns is None else min(turns - 1, max_turns)
        return admitted, DailyUsage(day=day, turns=turns, tokens=tokens)

    async def release_turn(self, user_id: str, day: str) -> None:
        await self._doc(user_id, day).update({_TURNS: Increment(-1)})

    async def charge_tokens(self, user_id: str, day: str, tokens: int) -> None:
        await self._doc(user_id, day).set(
            {_TOKENS: Increment(tokens), EXPIRE_AT: expire_at(day)}, merge=True
        )

    async def usage(self, user_id: str, day: str) -> DailyUsage:
        snapshot = await self._doc(user_id, day).get()
        data = snapshot.to_dict() or {}
        return DailyUsage(day=day, turns=data.get(_TURNS, 0), tokens=data.get(_TOKENS, 0))

    async def delete_user(self, user_id: str, *, keep_day: str | None = None) -> int:
        removed = 0
        batch = self.client.batch()
        async for ref in self._days(user_id).list_documents():  # one document per day of use
            if ref.id == keep_day:
                continue
            batch.delete(ref)
            removed += 1
            if removed % 500 == 0:  # a batch holds at most 500 writes
                await batch.commit()
                batch = self.client.batch()
        if removed % 500:
            await batch.commit()
        return removed

    async def close(self) -> None:
        """The Firestore client is the session store's; it closes it."""

"""The profile on Firestore: the fields of `users/{uid}` itself (its subcollections hold the
user's sessions and memories). Writes go through a transaction: read the document, apply the
ops, write back only the touched units with field-mask merges (see ops.py)."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.async_batch import AsyncWriteBatch
from google.cloud.firestore_v1.async_transaction import AsyncTransaction
from google.cloud.firestore_v1.field_path import FieldPath

from confidant.profiles.ops import ProfileOp, apply_ops, get_path, touched_units
from confidant.profiles.store import MISSING, ProfileVersion


def stored_profile(snapshot: firestore.DocumentSnapshot) -> dict[str, Any]:
    return (snapshot.to_dict() or {}) if snapshot.exists else {}


def version_of(snapshot: firestore.DocumentSnapshot) -> ProfileVersion:
    return ProfileVersion(
        stored_profile(snapshot), snapshot.update_time if snapshot.exists else MISSING
    )


def write_ops_on_version(
    writer: AsyncWriteBatch,
    ref: firestore.AsyncDocumentReference,
    version: ProfileVersion,
    ops: list[ProfileOp],
    option: object,
) -> None:
    """Queue the writes of `ops` on the profile as the turn loaded it, without reading it
    again: an update on the precondition that the document is unchanged (`option`), or a
    create when it did not exist. A concurrent writer makes the batch fail; the caller then
    retries in a transaction."""
    after = apply_ops(version.stored, ops)
    units = touched_units(ops)
    if version.token is MISSING:
        nested: dict[str, Any] = {}
        for unit in units:
            value = get_path(after, unit)
            if value is None:
                continue
            node = nested
            for part in unit[:-1]:
                node = node.setdefault(part, {})
            node[unit[-1]] = value
        if nested:
            writer.create(ref, nested)
        return
    updates = {
        FieldPath(*unit).to_api_repr(): (
            firestore.DELETE_FIELD if (value := get_path(after, unit)) is None else value
        )
        for unit in units
    }
    if updates:
        writer.update(ref, updates, option=option)


def write_ops(
    writer: AsyncTransaction | AsyncWriteBatch,
    ref: firestore.AsyncDocumentReference,
    before: dict[str, Any],
    ops: list[ProfileOp],
) -> dict[str, Any]:
    """Queue the writes of `ops` on `before` (read in the same transaction); the new profile."""
    after = apply_ops(before, ops)
    units = touched_units(ops)
    if not units:
        return after
    nested: dict[str, Any] = {}
    for unit in units:
        value = get_path(after, unit)
        node = nested
        for part in unit[:-1]:
            node = node.setdefault(part, {})
        node[unit[-1]] = firestore.DELETE_FIELD if value is None else value
    # A field mask: exactly these units are replaced, every other field stays as stored.
    writer.set(ref, nested, merge=[FieldPath(*unit) for unit in units])
    return after

"""The caller's own data, for apps: memories and the emotion trajectory.

GET    /v1/me/memories?app=&limit=              the caller's memories, newest first
DELETE /v1/me/memories/{id}                     forget one memory (204; 404 when none)
GET    /v1/me/emotions?app=&session_id=&limit=  emotion snapshots, oldest first (ready to chart)

`DELETE /v1/me` (api.py) erases all of it with the rest of the caller's data.
"""

from __future__ import annotations

from starlette.responses import Response

from agents.registry import Route
from confidant.errors import NotFoundError
from confidant.http import schemas
from confidant.http.routing import Call, json_reply


async def list_memories(call: Call) -> Response:
    records = await call.runtime.store.list_memories(
        call.user_id, app=call.params.app, limit=call.params.limit
    )
    listed = schemas.MemoryList(memories=records)  # the embedding is excluded by the model
    return json_reply(listed)


async def delete_memory(call: Call) -> Response:
    memory_id = call.params.memory_id
    if not await call.runtime.store.delete_memory(call.user_id, memory_id):
        raise NotFoundError(f"memory {memory_id!r} not found")
    return Response(status_code=204)


async def list_emotions(call: Call) -> Response:
    params = call.params
    snapshots = await call.runtime.job_store.emotions(
        call.user_id, app=params.app, session_id=params.session_id, limit=params.limit
    )
    listed = schemas.EmotionList.model_validate({"emotions": snapshots})
    return json_reply(listed)


# Memory ids start with a letter or digit: `.`, `..` and `__…__` are never document ids.
ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        "/v1/me/memories",
        list_memories,
        "the caller's long-term memories, newest first",
        params=schemas.MemoriesQuery,
        responses={200: schemas.MemoryList},
    ),
    Route(
        "DELETE",
        r"/v1/me/memories/(?P<memory_id>[A-Za-z0-9][A-Za-z0-9_.:-]{0,199})",
        delete_memory,
        "forget one memory",
        responses={204: None},
        errors=(404,),
    ),
    Route(
        "GET",
        "/v1/me/emotions",
        list_emotions,
        "the caller's emotion snapshots, oldest first",
        params=schemas.EmotionsQuery,
        responses={200: schemas.EmotionList},
    ),
)

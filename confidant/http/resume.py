"""`GET /v1/chat/{session_id}/stream?app=&from=`: resume a reply's stream (the AI SDK's
`useChat({ resume: true })` / `DefaultChatTransport.reconnectToStream` convention).

200 with the same SSE UI message stream (and headers) as `POST /v1/chat`; 204 when the session
has no active or recent stream; 404 when the caller has no session of that id. `from` is the
number of parts the client already has (default 0: the whole reply from its `start`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import Field
from starlette.responses import Response, StreamingResponse

from agents.registry import Route
from confidant.http.routing import Call
from confidant.http.schemas import SessionParams
from confidant.sessions.records import SessionKey
from confidant.streaming.ui_stream import DONE_FRAME, HEADERS, sse_data


class ResumeParams(SessionParams):
    start: int = Field(
        default=0, ge=0, alias="from", description="how many parts the client already has"
    )


async def resume_response(call: Call) -> Response:
    params, runtime = call.params, call.runtime
    # The user id comes from the verified identity only: another user's session is a 204/404.
    key = SessionKey(call.user_id, params.app or runtime.settings.default_app, params.session_id)
    resumer = runtime.resumer
    parts = await resumer.open(key, start=params.start) if resumer is not None else None
    if parts is None:
        return Response(status_code=204)

    async def frames() -> AsyncIterator[bytes]:
        async for encoded in parts:
            yield sse_data(encoded)
        yield DONE_FRAME

    return StreamingResponse(frames(), headers=HEADERS)


ROUTE = Route(
    "GET",
    r"/v1/chat/(?P<session_id>[^/]+)/stream",
    resume_response,
    "resume a reply's stream: the rest of the same reply, from any instance",
    params=ResumeParams,
    responses={200: {"text/event-stream": None}, 204: None},
    errors=(404,),
)

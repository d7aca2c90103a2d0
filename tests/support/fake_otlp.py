"""A local OTLP/HTTP trace collector: decodes ExportTraceServiceRequest protobufs it receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.fake_http import FakeHttpServer


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExportRequest:
    path: str
    headers: dict[str, str]
    spans: list[ReceivedSpan]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class FakeOtlpCollector(FakeHttpServer[ExportRequest, None]):
    def build_app(self) -> Starlette:
        async def export(request: Request) -> Response:
            decoded = ExportTraceServiceRequest()
            decoded.ParseFromString(await request.body())
            spans = [
                ReceivedSpan(
                    span.name,
                    span.trace_id.hex(),
                    {a.key: _value(a.value) for a in span.attributes},
                )
                for resource in decoded.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]
            self._record_and_choose(ExportRequest(request.url.path, dict(request.headers), spans))
            return Response(
                ExportTraceServiceResponse().SerializeToString(),
                media_type="application/x-protobuf",
            )

        return Starlette(routes=[Route("/{path:path}", export, methods=["POST"])])

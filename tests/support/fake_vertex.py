"""A local server speaking the Vertex AI wire formats the wisdom adapters use.

* Embeddings, as google-genai calls them:
  - Vertex AI `POST …/publishers/google/models/{model}:predict`, body
    `{"instances": [{"content", "task_type"}], "parameters": {"outputDimensionality"}}` →
    `{"predictions": [{"embeddings": {"values", "statistics"}}]}`. Like the real service,
    `gemini-embedding-001` accepts one instance per request (400 otherwise).
  - Gemini API `POST …/models/{model}:batchEmbedContents`, body `{"requests": [{"model",
    "content": {"parts": [{"text"}]}, "taskType", "outputDimensionality"}]}` →
    `{"embeddings": [{"values"}]}`.
  Vectors are the offline hashed embedding of the text (deterministic and meaningful, so a
  search through this server ranks sensibly).
* Vector Search 1.0:
  - `POST …/indexes/{id}:upsertDatapoints` `{"datapoints": [IndexDatapoint]}` → `{}`;
  - `POST …/indexes/{id}:removeDatapoints` `{"datapointIds": [...]}` → `{}`;
  - `POST …/indexEndpoints/{id}:findNeighbors` `{"deployedIndexId", "queries": [{"datapoint":
    {"featureVector", "restricts"}, "neighborCount", "perCrowdingAttributeNeighborCount"}],
    "returnFullDatapoint"}` → `{"nearestNeighbors": [{"id", "neighbors": [{"datapoint",
    "distance"}]}]}`, ranked by dot product over the upserted datapoints, honouring namespace
    restricts (allow/deny lists) and crowding.

It also plays Google's OAuth token endpoint (`POST /token`, a signed JWT grant → a fresh
access token `token-<n>`), so Application Default Credentials from a service-account key file
whose `token_uri` points here refresh against it (`adc_file`).

Steps queued with `enqueue` apply to the next API requests (not token requests): an
`HttpError` (from fake_gemini) is answered as is; a `Delay` sleeps, then answers normally;
`None` answers normally.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from confidant.embeddings.hashed import HashedEmbedder
from tests.support.fake_gemini import HttpError, lower_headers, read_call
from tests.support.fake_http import FakeHttpServer

SINGLE_INSTANCE_MODELS = {"gemini-embedding-001"}
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_PATH = re.compile(r"/(?P<resource>[^:]+):(?P<method>[A-Za-z]+)$")


@dataclass(frozen=True)
class Delay:
    seconds: float


Step = HttpError | Delay | None


@dataclass
class VertexRequest:
    method: str  # predict, batchEmbedContents, findNeighbors, upsertDatapoints, removeDatapoints
    resource: str  # the path before ":method"
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return self.resource.rsplit("/", 1)[-1]

    @property
    def texts(self) -> list[str]:
        if self.method == "predict":
            return [instance["content"] for instance in self.body.get("instances", [])]
        return [
            "".join(part.get("text", "") for part in request["content"]["parts"])
            for request in self.body.get("requests", [])
        ]

    @property
    def task_types(self) -> list[str]:
        if self.method == "predict":
            return [instance.get("task_type", "") for instance in self.body.get("instances", [])]
        return [request.get("taskType", "") for request in self.body.get("requests", [])]

    @property
    def query(self) -> dict[str, Any]:
        return self.body["queries"][0]


def _allowed(datapoint: dict[str, Any], restricts: list[dict[str, Any]]) -> bool:
    values = {r["namespace"]: set(r.get("allowList", [])) for r in datapoint.get("restricts", [])}
    for restrict in restricts:
        have = values.get(restrict["namespace"], set())
        allow, deny = set(restrict.get("allowList", [])), set(restrict.get("denyList", []))
        if (allow and not have & allow) or have & deny:
            return False
    return True


class FakeVertex(FakeHttpServer[VertexRequest, Step]):
    """Embeddings and Vector Search on 127.0.0.1; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.datapoints: dict[str, dict[str, Any]] = {}
        self.tokens_issued = 0

    def build_app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/token", self._token, methods=["POST"]),
                Route("/{path:path}", self._handle, methods=["POST"]),
            ]
        )

    def adc_file(self, directory: Path) -> Path:
        """A service-account key file (GOOGLE_APPLICATION_CREDENTIALS) whose token_uri is us."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        path = directory / "adc.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": "test-project",
                    "private_key_id": "test-key",
                    "private_key": pem,
                    "client_email": "chat@test-project.iam.gserviceaccount.com",
                    "client_id": "1",
                    "token_uri": f"{self.base_url}/token",
                }
            )
        )
        return path

    async def _token(self, request: Request) -> Response:
        form = await request.form()
        if form.get("grant_type") != JWT_BEARER or not form.get("assertion"):
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        self.tokens_issued += 1
        return JSONResponse(
            {
                "access_token": f"token-{self.tokens_issued}",
                "expires_in": 3600,
                "token_type": "Bearer",
            }
        )

    async def _handle(self, request: Request) -> Response:
        call = await read_call(request, _PATH)
        if isinstance(call, Response):
            return call
        match, body = call
        recorded = VertexRequest(
            method=match["method"],
            resource=match["resource"],
            headers=lower_headers(request),
            body=body,
        )
        step = self._record_and_choose(recorded)
        if isinstance(step, HttpError):
            return JSONResponse(step.body(), status_code=step.status)
        if isinstance(step, Delay):
            await asyncio.sleep(step.seconds)
        handler = {
            "predict": self._predict,
            "batchEmbedContents": self._batch_embed_contents,
            "upsertDatapoints": self._upsert_datapoints,
            "removeDatapoints": self._remove_datapoints,
            "findNeighbors": self._find_neighbors,
        }.get(recorded.method)
        if handler is None:
            return JSONResponse(HttpError(404, f"no method {recorded.method}").body(), 404)
        answer: dict[str, Any] | HttpError = handler(recorded)
        if isinstance(answer, HttpError):
            return JSONResponse(answer.body(), status_code=answer.status)
        return JSONResponse(answer)

    # --- embeddings ---

    @staticmethod
    def _vector(text: str, dimensions: int) -> list[float]:
        return HashedEmbedder(dimensions=dimensions).embed_one(text)

    def _predict(self, request: VertexRequest) -> dict[str, Any] | HttpError:
        instances = request.body.get("instances", [])
        if request.model in SINGLE_INSTANCE_MODELS and len(instances) != 1:
            return HttpError(400, f"{request.model} accepts one instance per request")
        dimensions = int(request.body.get("parameters", {}).get("outputDimensionality", 3072))
        return {
            "predictions": [
                {
                    "embeddings": {
                        "values": self._vector(instance["content"], dimensions),
                        "statistics": {"token_count": len(instance["content"]), "truncated": False},
                    }
                }
                for instance in instances
            ]
        }

    def _batch_embed_contents(self, request: VertexRequest) -> dict[str, Any]:
        requests = request.body.get("requests", [])
        return {
            "embeddings": [
                {"values": self._vector(text, int(item.get("outputDimensionality", 3072)))}
                for text, item in zip(request.texts, requests, strict=True)
            ]
        }

    # --- vector search ---

    def _upsert_datapoints(self, request: VertexRequest) -> dict[str, Any]:
        for datapoint in request.body.get("datapoints", []):
            self.datapoints[datapoint["datapointId"]] = datapoint
        return {}

    def _remove_datapoints(self, request: VertexRequest) -> dict[str, Any]:
        for datapoint_id in request.body.get("datapointIds", []):
            self.datapoints.pop(datapoint_id, None)
        return {}

    def _find_neighbors(self, request: VertexRequest) -> dict[str, Any]:
        full = bool(request.body.get("returnFullDatapoint"))
        results = []
        for query in request.body.get("queries", []):
            vector = query["datapoint"]["featureVector"]
            restricts = query["datapoint"].get("restricts", [])
            scored = sorted(
                (
                    (sum(a * b for a, b in zip(vector, dp["featureVector"], strict=True)), dp)
                    for dp in self.datapoints.values()
                    if _allowed(dp, restricts)
                ),
                key=lambda pair: (-pair[0], pair[1]["datapointId"]),
            )
            crowding_limit = int(query.get("perCrowdingAttributeNeighborCount") or 0)
            per_attribute: Counter[str] = Counter()
            neighbors = []
            for distance, dp in scored:
                attribute = (dp.get("crowdingTag") or {}).get("crowdingAttribute", "")
                if crowding_limit and attribute and per_attribute[attribute] >= crowding_limit:
                    continue
                per_attribute[attribute] += 1
                brief = {k: dp[k] for k in ("datapointId", "crowdingTag") if k in dp}
                shown = dp if full else brief
                neighbors.append({"datapoint": shown, "distance": distance})
                if len(neighbors) >= int(query.get("neighborCount") or 10):
                    break
            query_id = query["datapoint"].get("datapointId", "")
            results.append({"id": query_id, "neighbors": neighbors})
        return {"nearestNeighbors": results}

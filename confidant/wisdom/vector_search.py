"""A small REST client for Vertex AI Vector Search (1.0: index + index endpoint).

Why this API generation: Vector Search 2.0 (collections of data objects) is simpler to run,
but its search request has no crowding, and the coach needs a per-source crowding limit so
that chunks of one passage never fill the top k. The index-endpoint API (`findNeighbors` on
the endpoint's public domain) has crowding tags, namespace restricts (locale, topic), stream
updates (`upsertDatapoints` / `removeDatapoints`, no Cloud Storage staging) and `embedding
Metadata` stored with each datapoint, returned with `returnFullDatapoint`, so a hit carries its
passage text and no second read is needed. Its Terraform resources are GA in the google
provider (index, endpoint, deployed index).

Why REST on httpx and not google-cloud-aiplatform: importing that SDK costs ~2.3 s of cold
start, and three JSON calls do not need it. Credentials come from the environment
(`google.auth.default`, the Cloud Run service account), refreshed off the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class VectorSearchError(RuntimeError):
    """A non-2xx answer from Vector Search."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"vector search answered {status}: {message}")
        self.status = status

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE_STATUSES


@dataclass(frozen=True)
class Restrict:
    """A namespace restrict: on a datapoint its values; on a query, the allowed values."""

    namespace: str
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"namespace": self.namespace}
        if self.allow:
            body["allowList"] = list(self.allow)
        if self.deny:
            body["denyList"] = list(self.deny)
        return body


@dataclass(frozen=True)
class Datapoint:
    datapoint_id: str
    vector: Sequence[float]
    restricts: Sequence[Restrict] = ()
    crowding_attribute: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "datapointId": self.datapoint_id,
            "featureVector": list(self.vector),
            "restricts": [restrict.to_json() for restrict in self.restricts],
        }
        if self.crowding_attribute:
            body["crowdingTag"] = {"crowdingAttribute": self.crowding_attribute}
        if self.metadata:
            body["embeddingMetadata"] = dict(self.metadata)
        return body


@dataclass(frozen=True)
class Neighbor:
    datapoint_id: str
    distance: float  # with DOT_PRODUCT_DISTANCE on unit vectors: the cosine (higher = closer)
    metadata: Mapping[str, Any]
    crowding_attribute: str | None


class GoogleAccessToken:
    """Bearer tokens from Application Default Credentials, loaded and refreshed lazily."""

    def __init__(self, credentials: Credentials | None = None) -> None:
        self._credentials = credentials
        self._lock = asyncio.Lock()

    async def header(self) -> dict[str, str]:
        async with self._lock:
            if self._credentials is None:
                import google.auth

                self._credentials, _ = await asyncio.to_thread(
                    google.auth.default, scopes=[CLOUD_PLATFORM_SCOPE]
                )
            credentials = self._credentials
            if not credentials.valid:
                from google.auth.transport.requests import Request

                await asyncio.to_thread(credentials.refresh, Request())
        return {"authorization": f"Bearer {credentials.token}"}


def _error_message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("message") or response.text)
    except ValueError:
        return response.text[:200]


class VectorSearchClient:
    """findNeighbors on an index endpoint; upsert/remove on an index. One per process."""

    def __init__(
        self,
        *,
        http: httpx.AsyncClient | None = None,
        token: GoogleAccessToken | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self._http = http or httpx.AsyncClient(timeout=timeout_s)
        self._token = token or GoogleAccessToken()

    async def _post(self, url: str, body: Mapping[str, Any]) -> dict[str, Any]:
        response = await self._http.post(url, json=body, headers=await self._token.header())
        if response.status_code >= 400:
            raise VectorSearchError(response.status_code, _error_message(response))
        return response.json() if response.content else {}

    async def find_neighbors(
        self,
        *,
        endpoint_url: str,
        index_endpoint: str,
        deployed_index_id: str,
        vector: Sequence[float],
        neighbor_count: int,
        restricts: Sequence[Restrict] = (),
        per_crowding_attribute_neighbor_count: int | None = None,
    ) -> list[Neighbor]:
        query: dict[str, Any] = {
            "datapoint": {
                "datapointId": "query",
                "featureVector": list(vector),
                "restricts": [restrict.to_json() for restrict in restricts],
            },
            "neighborCount": neighbor_count,
        }
        if per_crowding_attribute_neighbor_count:
            query["perCrowdingAttributeNeighborCount"] = per_crowding_attribute_neighbor_count
        body = {
            "deployedIndexId": deployed_index_id,
            "queries": [query],
            # The passage text is in each datapoint's embeddingMetadata: one round trip.
            "returnFullDatapoint": True,
        }
        answer = await self._post(f"{endpoint_url}/v1/{index_endpoint}:findNeighbors", body)
        results = answer.get("nearestNeighbors") or [{}]
        return [
            Neighbor(
                datapoint_id=str(hit.get("datapoint", {}).get("datapointId", "")),
                distance=float(hit.get("distance", 0.0)),
                metadata=hit.get("datapoint", {}).get("embeddingMetadata") or {},
                crowding_attribute=(hit.get("datapoint", {}).get("crowdingTag") or {}).get(
                    "crowdingAttribute"
                ),
            )
            for hit in results[0].get("neighbors") or []
        ]

    async def upsert_datapoints(
        self, *, api_url: str, index: str, datapoints: Sequence[Datapoint]
    ) -> None:
        body = {"datapoints": [datapoint.to_json() for datapoint in datapoints]}
        await self._post(f"{api_url}/v1/{index}:upsertDatapoints", body)

    async def remove_datapoints(self, *, api_url: str, index: str, ids: Sequence[str]) -> None:
        await self._post(f"{api_url}/v1/{index}:removeDatapoints", {"datapointIds": list(ids)})

    async def close(self) -> None:
        await self._http.aclose()


def regional_api_url(resource: str) -> str:
    """`https://{location}-aiplatform.googleapis.com` for `projects/p/locations/{location}/…`."""
    parts = resource.split("/")
    try:
        location = parts[parts.index("locations") + 1]
    except (ValueError, IndexError) as exc:
        raise ValueError(f"not a regional resource name: {resource!r}") from exc
    return f"https://{location}-aiplatform.googleapis.com"


def endpoint_url(public_domain: str) -> str:
    """The index endpoint's public domain as a base URL (a full URL is kept as is)."""
    return public_domain if "://" in public_domain else f"https://{public_domain}"

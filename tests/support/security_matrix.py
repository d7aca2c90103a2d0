"""The security matrix (issue 14, item 8): every endpoint, called by user B with user A's ids.

User A ("alice") builds real data through the API in every app: sessions, memories and emotion
snapshots (post-turn jobs), a person, a self-profile, a profile proposal, a lifecoach report, a
taskflow artifact and a taskflow run paused for a human answer. Then user B ("mallory") calls
every case of `CASES` with A's ids. A case expects one of:

- `FOREIGN`: 404 from the resource lookup (not "no route"), never data;
- `NO_DATA`: 404 or an empty 204 (e.g. "no active stream" of the AI SDK's resume GET);
- `OWN`:     2xx, only B's own data (nothing of A's in the body);
- `TURN`:    a chat turn on A's session id runs in B's own session: 2xx and nothing of A's;
- `REFUSED`: a 4xx with a reason (e.g. answering A's paused call), nothing of A's;
- `PUBLIC`:  served without an identity, nothing of A's;
- `ADMIN`:   403 for a caller without the admin claim (401 without identity).

Every non-public case is also called without an identity (401), every GET case is first called
as A (the owner gets 2xx, and A's data really is behind a FOREIGN path), every FOREIGN answer
must equal the answer for an id nobody has (no existence oracle), and afterwards A re-reads
everything and finds it unchanged.

**Adding an endpoint**: add one `Case(...)` line to `CASES` (ids of A's data are `{name}`
placeholders, see `Seeded.ids`). `declared_endpoints` collects the README's HTTP API table, the
apps' routes (`GET /v1/apps`) and, when served, `/openapi.json`; the coverage test fails for any
declared endpoint no case calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.sse import of_type, parse_frames
from tests.support.taskflow import REQUEST

README = Path(__file__).resolve().parents[2] / "README.md"
# A word only A ever writes: it must never reach B.
MARKER = "Zephyrine"
OWNER = "alice"
STRANGER = "mallory"
APPS = ("onemind", "relationship", "lifecoach", "taskflow")

FOREIGN, NO_DATA, OWN, TURN = "foreign", "no data", "own", "turn"
REFUSED, PUBLIC, ADMIN = "refused", "public", "admin"

# The matrix sends hundreds of requests as two users at once: rate limits (tested on their own
# in tests/unit/http/test_quota_api.py) are off so every answer is about ownership.
NO_RATE_LIMITS = {"rate_limit_user_per_min": 0, "rate_limit_ip_per_min": 0}


@dataclass(frozen=True)
class Case:
    method: str
    path: str  # `{name}` placeholders take A's ids (see Seeded.ids)
    expect: str
    body: Any = None


def _session_cases(app: str) -> tuple[Case, ...]:
    return (
        Case("GET", f"/v1/sessions?app={app}", OWN),
        Case("GET", f"/v1/sessions/{{{app}}}?app={app}", FOREIGN),
        Case("GET", f"/v1/sessions/{{{app}}}?app={app}&page_size=1&page_token=0", FOREIGN),
        Case("GET", f"/v1/sessions/{{{app}}}/artifacts?app={app}", FOREIGN),
        Case("DELETE", f"/v1/sessions/{{{app}}}?app={app}", FOREIGN),
        Case("GET", f"/v1/chat/{{{app}}}/stream?app={app}", NO_DATA),
    )


_ADMIN_CONFIG = {"agents": {"*": {"instruction": {"text": "Obey mallory."}}}}

# Order matters only in one way: the chat turns (which create B's sessions under A's session
# ids) and `DELETE /v1/me` come last, after every read that must find nothing.
CASES: tuple[Case, ...] = (
    Case("GET", "/healthz", PUBLIC),
    Case("GET", "/", PUBLIC),
    Case("GET", "/v1/apps", PUBLIC),
    Case("GET", "/openapi.json", PUBLIC),
    *(case for app in APPS for case in _session_cases(app)),
    Case("GET", "/v1/sessions/{taskflow}/artifacts/{artifact}?app=taskflow", FOREIGN),
    Case("GET", "/v1/sessions/{taskflow}/artifacts/{artifact}?app=taskflow&version=0", FOREIGN),
    Case("GET", "/v1/me/memories", OWN),
    Case("GET", "/v1/me/memories?app=onemind&limit=200", OWN),
    Case("DELETE", "/v1/me/memories/{memory}", FOREIGN),
    Case("GET", "/v1/me/emotions", OWN),
    Case("GET", "/v1/me/emotions?app=onemind&session_id={onemind}", OWN),
    Case("GET", "/v1/me/profile", OWN),
    Case("PATCH", "/v1/me/profile", OWN, {"account": {"display_name": "Mal"}}),
    Case("GET", "/v1/me/reports/lifecoach/weekly_review", FOREIGN),
    Case("GET", "/v1/me/usage", OWN),
    Case("GET", "/v1/admin/apps/onemind/config", ADMIN),
    Case("PUT", "/v1/admin/apps/onemind/config", ADMIN, _ADMIN_CONFIG),
    Case("GET", "/v1/admin/apps/onemind/versions?limit=5", ADMIN),
    Case("POST", "/v1/admin/apps/onemind/rollback", ADMIN, {"version": 1}),
    Case("GET", "/v1/relationship/persons", OWN),
    Case("GET", "/v1/relationship/persons/{person}", FOREIGN),
    Case("PUT", "/v1/relationship/persons/{person}", FOREIGN, {"name": "Hijacked"}),
    Case("DELETE", "/v1/relationship/persons/{person}", FOREIGN),
    Case("POST", "/v1/relationship/persons", OWN, {"name": "Someone of mallory's"}),
    Case("GET", "/v1/relationship/self-profile", OWN),
    Case("PUT", "/v1/relationship/self-profile", OWN, {"about": "mallory"}),
    Case("GET", "/v1/relationship/proposals?status=all", OWN),
    Case("POST", "/v1/relationship/proposals/{proposal}/accept", FOREIGN),
    Case("POST", "/v1/relationship/proposals/{proposal}/reject", FOREIGN),
    # A's person in B's turn: 404 before any model call.
    Case(
        "POST",
        "/v1/chat",
        FOREIGN,
        {"app": "relationship", "message": "hi", "person_id": "{person}"},
    ),
    Case("POST", "/v1/relationship/analyze", FOREIGN, {"message": "hi", "person_id": "{person}"}),
    # B answers A's paused taskflow run: there is no pending call in B's session of that id.
    Case(
        "POST",
        "/v1/chat",
        REFUSED,
        {
            "app": "taskflow",
            "session_id": "{paused}",
            "message": "Approve",
            "human_response": {"call_id": "{call}", "approved": True},
        },
    ),
    *(
        Case(
            "POST",
            "/v1/chat",
            TURN,
            {"app": app, "session_id": f"{{{app}}}", "message": "What did I tell you before?"},
        )
        for app in APPS
    ),
    *(
        Case(
            "POST",
            f"/v1/relationship/{mode}",
            TURN,
            {"session_id": "{relationship}", "message": "What did I say about him?"},
        )
        for mode in ("analyze", "advise", "script")
    ),
    Case("DELETE", "/v1/me", OWN),
)


# --- A's data ---------------------------------------------------------------------------------


@dataclass
class Seeded:
    """A's ids (`{name}` in case paths) and the strings that must never reach B."""

    ids: dict[str, str] = field(default_factory=dict)

    def secrets(self, *, with_session_ids: bool) -> list[str]:
        # B may reuse A's session ids for B's own sessions (ids are the client's choice); every
        # other id is minted by the server and is A's alone.
        sessions = set(APPS) | {"paused"}
        return [MARKER] + [
            value for name, value in self.ids.items() if with_session_ids or name not in sessions
        ]


Headers = Callable[[str], dict[str, str]]


async def _turn(client: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> list[dict]:
    response = await client.post("/v1/chat", json=body, headers=headers)
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return parts


async def seed_owner(
    client: httpx.AsyncClient, headers: dict[str, str], drain: Callable[[], Awaitable[Any]]
) -> Seeded:
    """A's data in every app, made through the API as a client makes it."""
    seeded = Seeded()
    ids = seeded.ids
    ids.update({app: f"{app}-of-{OWNER}-5f1c" for app in APPS} | {"paused": "paused-of-a-93d2"})

    for message in (
        f"I am a teacher and {MARKER} makes me feel stuck",
        f"My brother {MARKER} is angry with me and I am sad",
    ):
        await _turn(client, headers, app="onemind", session_id=ids["onemind"], message=message)

    person = await client.post(
        "/v1/relationship/persons",
        json={"name": MARKER, "relationship": "brother", "notes": f"{MARKER} hates mornings"},
        headers=headers,
    )
    assert person.status_code == 201, person.text
    ids["person"] = person.json()["id"]
    profile = await client.put(
        "/v1/relationship/self-profile", json={"about": f"{MARKER}'s sibling"}, headers=headers
    )
    assert profile.status_code == 200, profile.text
    await _turn(
        client,
        headers,
        app="relationship",
        session_id=ids["relationship"],
        person_id=ids["person"],
        message="I am a night owl. Why is he so distant?",
    )

    start = {"protocol_id": "weekly_review", "action": "start"}
    await _turn(
        client,
        headers,
        app="lifecoach",
        session_id=ids["lifecoach"],
        message="Start",
        protocol_action=start,
    )
    for answer in (f"shipped {MARKER}", "ask for help sooner", "health", "run on Monday"):
        parts = await _turn(
            client, headers, app="lifecoach", session_id=ids["lifecoach"], message=answer
        )
    assert of_type(parts, "data-protocol-completed"), parts

    task = f"{REQUEST}. It's about {MARKER}'s invoices. 2026-12-01"
    await _turn(client, headers, app="taskflow", session_id=ids["taskflow"], message=task)
    final = of_type(
        await _turn(client, headers, app="taskflow", session_id=ids["taskflow"], message="yes"),
        "data-human-confirmation-needed",
    )
    done = await _turn(
        client,
        headers,
        app="taskflow",
        session_id=ids["taskflow"],
        message="approve",
        human_response={"call_id": final[0]["data"]["callId"], "approved": True},
    )
    outputs = [p["output"] for p in of_type(done, "tool-output-available")]
    ids["artifact"] = next(
        o["artifact"] for o in outputs if isinstance(o, dict) and "artifact" in o
    )
    paused = await _turn(client, headers, app="taskflow", session_id=ids["paused"], message=task)
    ids["call"] = of_type(paused, "data-human-confirmation-needed")[0]["data"]["callId"]

    patched = await client.patch(
        "/v1/me/profile", json={"account": {"display_name": MARKER}}, headers=headers
    )
    assert patched.status_code == 200, patched.text
    await drain()  # post-turn jobs: memories, emotions, summaries, the profile proposal

    memories = (await client.get("/v1/me/memories", headers=headers)).json()["memories"]
    ids["memory"] = next(m["id"] for m in memories if MARKER in m["text"])
    proposals = await client.get("/v1/relationship/proposals", headers=headers)
    ids["proposal"] = proposals.json()["proposals"][0]["id"]
    return seeded


# --- running the cases ------------------------------------------------------------------------


def _fill(value: Any, ids: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: ids.get(m[1], m[0]), value)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


def concrete(case: Case, ids: Mapping[str, str]) -> tuple[str, Any]:
    return _fill(case.path, ids), _fill(case.body, ids)


async def call(
    client: httpx.AsyncClient, case: Case, ids: Mapping[str, str], headers: dict[str, str]
) -> httpx.Response:
    path, body = concrete(case, ids)
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["json"] = body
    return await client.request(case.method, path, **kwargs)


def is_unrouted(response: httpx.Response) -> bool:
    """The dispatcher's own 404 (nothing serves the path), not a resource that was not found."""
    if response.status_code != 404:
        return False
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return False
    return message.startswith("no route for")


def check(case: Case, response: httpx.Response, seeded: Seeded) -> str | None:
    """Why `response` to B breaks the case's guarantee, or None."""
    status = response.status_code
    # An error may name the id B sent ("session 'x' not found"); anything else of A's is a leak.
    sent = json.dumps(concrete(case, seeded.ids))
    secrets = seeded.secrets(with_session_ids=case.expect != TURN)
    leaked = [s for s in secrets if s in response.text and s not in sent]
    if leaked:
        return f"{status}: A's data reached B: {leaked}"
    if is_unrouted(response):
        return "nothing routes this case's path (a stale case?)"
    expected = {
        FOREIGN: status == 404,
        NO_DATA: status == 404 or (status == 204 and not response.content),
        OWN: 200 <= status < 300,
        TURN: status == 200,
        REFUSED: 400 <= status < 500 and status not in (401, 403),
        PUBLIC: status == 200,
        ADMIN: status == 403,
    }[case.expect]
    if not expected:
        return f"expected {case.expect}, got {status}: {response.text[:300]}"
    if status >= 400 and not response.json()["error"]["message"]:
        return "an error without a reason"
    return None


async def snapshot(
    client: httpx.AsyncClient, seeded: Seeded, headers: dict[str, str]
) -> dict[str, str]:
    """Everything A can read, as text: compared before and after B's calls."""
    ids = seeded.ids
    paths = [
        *(f"/v1/sessions/{ids[app]}?app={app}&page_size=200" for app in APPS),
        f"/v1/sessions/{ids['paused']}?app=taskflow&page_size=200",
        *(f"/v1/sessions?app={app}" for app in APPS),
        f"/v1/sessions/{ids['taskflow']}/artifacts?app=taskflow",
        f"/v1/sessions/{ids['taskflow']}/artifacts/{ids['artifact']}?app=taskflow",
        "/v1/me/memories?limit=200",
        "/v1/me/emotions?limit=200",
        "/v1/me/profile",
        "/v1/me/reports/lifecoach/weekly_review",
        "/v1/relationship/persons",
        f"/v1/relationship/persons/{ids['person']}",
        "/v1/relationship/self-profile",
        "/v1/relationship/proposals?status=all",
    ]
    seen = {}
    for path in paths:
        response = await client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.text)
        seen[path] = response.text
    return seen


async def run_matrix(
    client: httpx.AsyncClient,
    drain: Callable[[], Awaitable[Any]],
    owner: dict[str, str],
    stranger: dict[str, str],
    admin: dict[str, str],
) -> None:
    """Seed A's data as `owner`, call every case as `stranger` (and without identity, and the
    admin cases as `admin`), then check A's data is unchanged. Fails with every broken case."""
    seeded = await seed_owner(client, owner, drain)
    before = await snapshot(client, seeded, owner)
    failures: list[str] = []
    for case in CASES:
        if case.method == "GET" and case.expect == FOREIGN:
            # The owner reaches the same path, so B's 404 is about ownership, not a bad path.
            as_owner = await call(client, case, seeded.ids, owner)
            if as_owner.status_code != 200:
                failures.append(f"{case}: the owner got {as_owner.status_code}")
        response = await call(client, case, seeded.ids, stranger)
        if (problem := check(case, response, seeded)) is not None:
            failures.append(f"{case.method} {case.path}: {problem}")
        elif case.expect in (FOREIGN, NO_DATA) and (
            oracle := await _existence_oracle(client, case, seeded.ids, stranger, response)
        ):
            failures.append(f"{case.method} {case.path}: {oracle}")
        if case.expect != PUBLIC:
            anonymous = await call(client, case, seeded.ids, {})
            if anonymous.status_code != 401 or not anonymous.json()["error"]["message"]:
                failures.append(
                    f"{case.method} {case.path} without identity: {anonymous.status_code}"
                )
        if case.expect == ADMIN:
            allowed = await call(client, case, seeded.ids, admin)
            if not 200 <= allowed.status_code < 300:  # the claim is what opens it
                failures.append(f"{case.path} as admin: {allowed.status_code} {allowed.text}")
    assert not failures, "\n".join(failures)
    await drain()
    assert await snapshot(client, seeded, owner) == before, "B's calls changed A's data"


async def _existence_oracle(
    client: httpx.AsyncClient,
    case: Case,
    ids: Mapping[str, str],
    stranger: dict[str, str],
    response: httpx.Response,
) -> str | None:
    """B must not learn that A's id exists: the answer for an id nobody has is the same."""
    ghosts = {name: f"ghost-{name}" for name in ids}
    missing = await call(client, case, ghosts, stranger)

    def shape(answer: httpx.Response, values: Mapping[str, str]) -> tuple[int, str]:
        text = answer.text
        for value in sorted(values.values(), key=len, reverse=True):
            text = text.replace(value, "<id>")
        return answer.status_code, text

    if shape(response, ids) != shape(missing, ghosts):
        return f"A's id answers {shape(response, ids)}, a missing one {shape(missing, ghosts)}"
    return None


# --- which endpoints exist --------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    method: str
    pattern: str  # a regular expression over the path (no query)
    source: str

    def covered_by(self, method: str, path: str) -> bool:
        return method == self.method and re.fullmatch(self.pattern, path) is not None


_README_ROW = re.compile(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/[^`?]*)[^`]*` \|")


def _template_pattern(template: str) -> str:
    """`/v1/sessions/{id}` → a regex matching any value of each `{...}` segment."""
    return "".join(
        "[^/]+" if piece.startswith("{") else re.escape(piece)
        for piece in re.split(r"(\{[^}/]+\})", template)
    )


def readme_endpoints(text: str | None = None) -> list[Endpoint]:
    """The rows of the README's `## HTTP API` table (the platform's own endpoints)."""
    text = text if text is not None else README.read_text(encoding="utf-8")
    section = text.split("## HTTP API", 1)[1].split("\n## ", 1)[0]
    found = []
    for line in section.splitlines():
        row = _README_ROW.match(line)
        if row:
            found.append(Endpoint(row[1], _template_pattern(row[2]), "README"))
    return found


async def declared_endpoints(client: httpx.AsyncClient) -> list[Endpoint]:
    """Every endpoint the service declares: README table, app routes, and the OpenAPI document
    when one is served."""
    endpoints = readme_endpoints()
    apps = (await client.get("/v1/apps")).json()["apps"]
    for app in apps:
        for route in app["endpoints"]:
            endpoints.append(Endpoint(route["method"], route["path"], f"app {app['name']}"))
    document = await client.get("/openapi.json")
    if document.status_code == 200:
        for path, operations in document.json().get("paths", {}).items():
            for method in operations:
                if method.upper() in ("GET", "POST", "PUT", "PATCH", "DELETE"):
                    endpoints.append(
                        Endpoint(method.upper(), _template_pattern(path), "openapi.json")
                    )
    return endpoints


def uncovered(endpoints: list[Endpoint], ids: Mapping[str, str]) -> list[Endpoint]:
    calls = [(case.method, concrete(case, ids)[0].split("?")[0]) for case in CASES]
    return [e for e in endpoints if not any(e.covered_by(m, p) for m, p in calls)]

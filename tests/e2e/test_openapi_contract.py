"""The OpenAPI contract against the real local server (issue 14, item 2).

schemathesis reads `GET /openapi.json` and calls every operation with generated requests
(valid and invalid ones), asserting no 5xx and that every response conforms to the document:
a declared status, a declared content type, a body its schema accepts (SSE events included).
Separately, the `data:` frames of real replies (a OneMind walk, a crisis message, a failed
turn, the other apps' parts) are validated against the document's StreamPart schemas.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import jsonschema
import pytest

from tests.e2e.conftest import REPO, Server, start_local_server, stop_server
from tests.support.sse import of_type, parse_frames

FUZZER = {"X-User-Id": "fuzzer"}  # an admin too, so the admin endpoints are fuzzed past 403
CHECKS = ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    )
)
# Bounded so the run stays near a minute on a loaded 2-core machine; a different seed explores
# other inputs (CONFIDANT_FUZZ_SEED=… to reproduce or widen a run).
MAX_EXAMPLES = os.environ.get("CONFIDANT_FUZZ_EXAMPLES", "6")
SEED = os.environ.get("CONFIDANT_FUZZ_SEED", "14")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:  # type: ignore[no-untyped-def]
    database = tmp_path_factory.mktemp("contract") / "confidant.db"
    started = start_local_server(
        database,
        CONFIDANT_ADMIN_USERS='["fuzzer"]',
        # Fuzzing sends hundreds of requests as one user: 429s are tested on their own.
        CONFIDANT_RATE_LIMIT_USER_PER_MIN="0",
        CONFIDANT_RATE_LIMIT_IP_PER_MIN="0",
        CONFIDANT_DEFAULT_TIER="unlimited",
    )
    yield started
    stop_server(started)


def _document(server: Server) -> dict:
    response = httpx.get(f"{server.base_url}/openapi.json", timeout=30)
    assert response.status_code == 200
    return response.json()


def _path_pattern(template: str) -> re.Pattern[str]:
    literal = (re.escape(piece) for piece in re.split(r"\{[^}]+\}", template))
    return re.compile("[^/]*".join(literal))


def _operation_of(
    documented: list[tuple[str, str]], method: str, url: str
) -> tuple[str, str] | None:
    """The documented operation a request went to (the most literal template its path matches),
    or None for the coverage phase's probes with an undeclared method."""
    path = urlsplit(url).path
    found = [(m, t) for m, t in documented if m == method and _path_pattern(t).fullmatch(path)]
    return min(found, key=lambda operation: operation[1].count("{"), default=None)


def test_schemathesis_finds_no_server_error_and_no_response_off_the_document(
    server: Server, tmp_path: Path
) -> None:
    documented = sorted(
        (method.upper(), path)
        for path, item in _document(server)["paths"].items()
        for method in item
    )
    command = [
        str(REPO / ".venv/bin/schemathesis"),
        "run",
        f"{server.base_url}/openapi.json",
        "--header",
        f"X-User-Id: {FUZZER['X-User-Id']}",
        "--checks",
        CHECKS,
        "--phases",
        "coverage,fuzzing",
        "--max-examples",
        MAX_EXAMPLES,
        "--seed",
        SEED,
        "--generation-database",
        "none",
        "--request-timeout",
        "30",
        "--no-color",
        # schemathesis leaves out the operation that served the document it loaded (GET
        # /openapi.json) unless a filter names it; this filter names every path.
        "--include-path-regex",
        "^/",
        "--report",
        "json,har",
        "--report-json-path",
        str(tmp_path / "run.json"),
        "--report-har-path",
        str(tmp_path / "requests.har"),
    ]
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    report = run.stdout[-8000:] + run.stderr[-2000:]
    assert run.returncode == 0, f"{report}\n--- server log ---\n{server.log()}"
    # Every documented operation was loaded and tested, none skipped or errored...
    counts = json.loads((tmp_path / "run.json").read_text())["operations"]
    n = len(documented)
    assert counts == counts | {"total": n, "selected": n, "tested": n, "errored": 0}, counts
    assert counts["skipped"] == 0, counts
    # ...and was sent requests (the requests schemathesis made, mapped back to the document).
    entries = json.loads((tmp_path / "requests.har").read_text())["log"]["entries"]
    sent = {_operation_of(documented, e["request"]["method"], e["request"]["url"]) for e in entries}
    assert sorted(sent - {None}) == documented  # type: ignore[operator]


def _part_validator(document: dict) -> jsonschema.Draft202012Validator:
    root = {"$ref": "#/components/schemas/StreamPart", "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


def _stream(client: httpx.Client, path: str, body: dict) -> list[dict]:
    response = client.post(path, json=body, headers=FUZZER, timeout=60)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    parts, done = parse_frames(response.text)
    assert done, response.text
    return parts


def test_every_streamed_frame_conforms_to_the_stream_part_schemas(server: Server) -> None:
    document = _document(server)
    validator = _part_validator(document)
    seen: list[dict] = []
    with httpx.Client(base_url=server.base_url) as client:
        walk = [
            "I keep putting off my thesis",
            "Part of me wants to rest",
            "I could try both",
            "I will write one page tomorrow",
        ]
        for message in walk:  # OneMind's stages: tool calls and progress parts
            seen += _stream(client, "/v1/chat", {"session_id": "walk", "message": message})
        crisis = _stream(client, "/v1/chat", {"session_id": "c", "message": "I want to die"})
        assert of_type(crisis, "data-crisis"), crisis
        seen += crisis
        seen += _stream(
            client, "/v1/relationship/advise", {"message": "What should I say to my boss?"}
        )
        routed = {"app": "relationship", "session_id": "r", "message": "Why did he go silent?"}
        seen += _stream(client, "/v1/chat", routed)
        task = {"app": "taskflow", "session_id": "t", "message": "Add a task: fix the roof"}
        seen += _stream(client, "/v1/chat", task)
        seen += _stream(
            client, "/v1/chat", {"app": "lifecoach", "session_id": "l", "message": "hello"}
        )
        # A turn that fails after the stream began: the app's model-call limit is too low.
        limited = client.put(
            "/v1/admin/apps/taskflow/config",
            json={"limits": {"max_llm_calls": 1}},
            headers=FUZZER,
        )
        assert limited.status_code == 200, limited.text
        failed = _stream(client, "/v1/chat", {**task, "session_id": "t2"})
        assert of_type(failed, "error"), failed
        seen += failed
    kinds = {part["type"] for part in seen}
    assert {"start", "data-session", "text-delta", "finish", "error", "data-crisis"} <= kinds
    assert {"tool-input-available", "tool-output-available", "data-protocol-progress"} <= kinds
    assert {"data-route", "data-agent"} <= kinds
    for part in seen:
        errors = [e.message for e in validator.iter_errors(part)]
        assert not errors, f"{json.dumps(part)[:400]}: {errors[:3]}"


def _reply_validator(document: dict, method: str, path: str, status: int):  # type: ignore[no-untyped-def]
    content = document["paths"][path][method.lower()]["responses"][str(status)]["content"]
    root = {**content["application/json"]["schema"], "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


def test_json_replies_with_real_data_conform_to_the_document(server: Server) -> None:
    """The 200s schemathesis rarely reaches (ids it cannot guess), with stored data behind them."""
    document = _document(server)
    as_json = {**FUZZER, "accept": "application/json"}
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        for message in ("I keep putting off my thesis", "Part of me wants to rest"):
            body = {"session_id": "json", "message": message}
            reply = client.post("/v1/chat", json=body, headers=as_json)
            assert reply.status_code == 200, reply.text
        routed = {"app": "relationship", "session_id": "rj", "message": "Why did he go silent?"}
        person = client.post("/v1/relationship/persons", json={"name": "Alex"}, headers=FUZZER)
        assert person.status_code == 201
        checks = [
            ("POST", "/v1/chat", "/v1/chat", routed, 200),
            ("GET", "/v1/sessions", "/v1/sessions", None, 200),
            ("GET", "/v1/sessions/{session_id}", "/v1/sessions/json?page_size=1", None, 200),
            (
                "GET",
                "/v1/sessions/{session_id}/artifacts",
                "/v1/sessions/json/artifacts",
                None,
                200,
            ),
            ("GET", "/v1/me/memories", "/v1/me/memories", None, 200),
            ("GET", "/v1/me/emotions", "/v1/me/emotions", None, 200),
            ("GET", "/v1/me/profile", "/v1/me/profile", None, 200),
            ("GET", "/v1/apps", "/v1/apps", None, 200),
            (
                "GET",
                "/v1/relationship/persons/{person_id}",
                f"/v1/relationship/persons/{person.json()['id']}",
                None,
                200,
            ),
            ("GET", "/v1/relationship/self-profile", "/v1/relationship/self-profile", None, 200),
            (
                "GET",
                "/v1/relationship/proposals",
                "/v1/relationship/proposals?status=all",
                None,
                200,
            ),
            ("GET", "/v1/admin/apps/{app}/config", "/v1/admin/apps/onemind/config", None, 200),
            ("GET", "/v1/admin/apps/{app}/versions", "/v1/admin/apps/onemind/versions", None, 200),
            ("GET", "/v1/sessions/{session_id}", "/v1/sessions/none", None, 404),
        ]
        for method, template, url, body, status in checks:
            response = client.request(method, url, json=body, headers=as_json)
            assert response.status_code == status, (url, response.text)
            errors = [
                f"{list(e.absolute_path)}: {e.message}"
                for e in _reply_validator(document, method, template, status).iter_errors(
                    response.json()
                )
            ]
            assert not errors, (url, errors[:3])
        page = client.get("/v1/sessions/json?page_size=1", headers=FUZZER).json()
        assert page["events"] and page["next_page_token"] is not None  # a real page was read

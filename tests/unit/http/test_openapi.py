"""`GET /openapi.json`: generated from the route table the dispatcher serves, with the models
the handlers validate with."""

from __future__ import annotations

import re

import jsonschema
import pytest
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

import agents
from agents.registry import _APPS, AppSpec, Route, register
from confidant.http import api
from confidant.http.openapi import path_template

ALICE = {"X-User-Id": "alice"}


async def _document(client) -> dict:  # type: ignore[no-untyped-def]
    response = await client.get("/openapi.json")  # no identity needed
    assert response.status_code == 200
    return response.json()


def _schema(document: dict, name: str) -> dict:
    return document["components"]["schemas"][name]


def _validator(document: dict, name: str) -> jsonschema.Draft202012Validator:
    root = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


async def test_every_served_route_is_documented_and_every_documented_one_is_served(
    make_client,
) -> None:
    client, _ = make_client()
    document = await _document(client)
    assert document["openapi"] == "3.1.0"
    documented = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    served = {(route.method, path_template(route.path)[0]) for route in api.routes()}
    assert documented == served
    for must in (
        ("POST", "/v1/chat"),
        ("GET", "/v1/sessions/{session_id}"),
        ("PATCH", "/v1/me/profile"),
        ("PUT", "/v1/admin/apps/{app}/config"),
        ("POST", "/v1/relationship/persons"),
        ("GET", "/openapi.json"),
    ):
        assert must in documented
    # Each documented path answers something other than "no route" for its method.
    for method, template in documented:
        concrete = re.sub(r"\{\w+\}", "x", template)
        if template == "/v1/relationship/{mode}":
            concrete = "/v1/relationship/analyze"
        if "{verdict}" in template:
            concrete = concrete[: -len("x")] + "accept"
        response = await client.request(method, concrete, headers=ALICE)
        assert "no route" not in response.text, (method, concrete)


async def test_bodies_and_parameters_are_the_handlers_models(make_client) -> None:
    client, _ = make_client()
    document = await _document(client)
    persons = document["paths"]["/v1/relationship/persons"]["post"]
    ref = persons["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    person = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert person["properties"]["name"]["maxLength"] == 80
    assert person["additionalProperties"] is False
    # The same limit is what the handler enforces.
    too_long = await client.post("/v1/relationship/persons", json={"name": "x" * 81}, headers=ALICE)
    assert too_long.status_code == 400 and "name" in too_long.json()["error"]["message"]
    page = document["paths"]["/v1/sessions/{session_id}"]["get"]["parameters"]
    by_name = {p["name"]: p for p in page}
    assert by_name["session_id"]["in"] == "path" and by_name["session_id"]["required"]
    assert by_name["page_size"]["schema"]["maximum"] == 200
    assert by_name["page_size"]["in"] == "query" and not by_name["page_size"]["required"]
    bad_page = await client.get("/v1/sessions/s1?page_size=201", headers=ALICE)
    assert bad_page.status_code == 400 and "page_size" in bad_page.json()["error"]["message"]
    chat = document["paths"]["/v1/chat"]["post"]
    assert {"200", "400", "401", "409", "413"} <= set(chat["responses"])
    assert chat["security"] == [{"firebase": []}, {"userIdHeader": []}]
    assert document["paths"]["/v1/apps"]["get"]["security"] == []


async def test_429_is_documented_exactly_where_the_rate_limits_apply(make_client) -> None:
    client, _ = make_client(rate_limit_ip_per_min=1, rate_limit_ip_burst=1)
    paths = (await _document(client))["paths"]
    assert "429" in paths["/v1/chat"]["post"]["responses"]
    assert "429" in paths["/v1/apps"]["get"]["responses"]
    assert "429" not in paths["/healthz"]["get"]["responses"]
    assert (await client.get("/v1/apps")).status_code == 429  # the document's request spent it
    assert (await client.get("/healthz")).status_code == 200


async def test_the_stream_is_a_discriminated_union_of_every_part(make_client) -> None:
    client, _ = make_client()
    document = await _document(client)
    stream = document["paths"]["/v1/chat"]["post"]["responses"]["200"]["content"]
    event = stream["text/event-stream"]["schema"]
    assert event["$ref"].endswith("/ServerSentEvent")
    union = _schema(document, "StreamPart")
    assert union["discriminator"]["propertyName"] == "type"
    kinds = set(union["discriminator"]["mapping"])
    platform = {"start", "text-start", "text-delta", "text-end", "tool-input-available"}
    platform |= {"tool-output-available", "error", "finish", "data-session", "data-crisis"}
    platform |= {"data-retry", "data-protocol-progress"}
    apps = {"data-route", "data-agent", "data-human-input-needed", "data-protocol-invitation"}
    assert platform | apps <= kinds
    validator = _validator(document, "StreamPart")
    validator.validate({"type": "text-delta", "id": "txt-1", "delta": "hi"})
    validator.validate(
        {
            "type": "data-retry",
            "data": {"attempt": 1, "max_retries": 2, "delay_s": 0.5, "reason": "429"},
            "transient": True,
        }
    )
    for wrong in (
        {"type": "text-delta", "id": "txt-1"},  # no delta
        {"type": "data-session", "data": {"app": "onemind"}},  # no sessionId
        {"type": "data-unknown", "data": {}},
        {"type": "finish", "extra": 1},
    ):
        assert not validator.is_valid(wrong), wrong


class _Echo(BaseModel):
    word: str = Field(max_length=5)


class _EchoParams(BaseModel):
    id: str
    times: int = Field(default=1, ge=1, le=3)


async def _echo(call) -> JSONResponse:  # type: ignore[no-untyped-def]
    return JSONResponse({"echo": [call.body.word] * call.params.times, "id": call.params.id})


@pytest.fixture
def echo_app():  # type: ignore[no-untyped-def]
    spec = AppSpec(
        name="echo-test",
        title="Echo",
        description="",
        build_root=lambda deps, turn: None,  # type: ignore[arg-type,return-value]
        routes=(
            Route(
                "POST",
                r"/v1/echo/(?P<id>[a-z]{1,8})",
                _echo,
                "echo a word",
                params=_EchoParams,
                body=_Echo,
            ),
        ),
    )
    register(spec)
    yield spec
    _APPS.pop(spec.name)


async def test_one_route_declaration_is_served_validated_and_documented(
    make_client, echo_app
) -> None:
    client, _ = make_client()
    ok = await client.post("/v1/echo/abc?times=2", json={"word": "hey"}, headers=ALICE)
    assert ok.status_code == 200 and ok.json() == {"echo": ["hey", "hey"], "id": "abc"}
    for url, body, reason in (
        ("/v1/echo/abc", {"word": "toolong"}, "word"),
        ("/v1/echo/abc?times=9", {"word": "hey"}, "times"),
        ("/v1/echo/abc", [], "body"),
    ):
        response = await client.post(url, json=body, headers=ALICE)
        assert response.status_code == 400 and reason in response.json()["error"]["message"]
    assert (await client.post("/v1/echo/ABC", json={"word": "a"}, headers=ALICE)).status_code == 404
    wrong_method = await client.get("/v1/echo/abc", headers=ALICE)
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
    assert wrong_method.json()["error"]["message"] == "use POST"
    assert (await client.post("/v1/echo/abc", json={"word": "a"})).status_code == 401
    document = await _document(client)
    operation = document["paths"]["/v1/echo/{id}"]["post"]
    assert operation["summary"] == "echo a word"
    params = {p["name"]: p for p in operation["parameters"]}
    assert params["id"]["schema"]["pattern"] == "^(?:[a-z]{1,8})$"
    assert params["times"]["schema"]["maximum"] == 3
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert _schema(document, body["$ref"].rsplit("/", 1)[1])["properties"]["word"]["maxLength"] == 5
    assert "echo-test" in agents.app_names()


def test_path_templates_come_from_named_groups() -> None:
    assert path_template(r"/v1/a/(?P<x>[a-z]{1,3})/b/(?P<y>c|d)") == (
        "/v1/a/{x}/b/{y}",
        {"x": "[a-z]{1,3}", "y": "c|d"},
    )
    with pytest.raises(ValueError, match="named groups"):
        path_template(r"/v1/a/[0-9]+")


async def test_what_the_fuzzer_found_is_a_400_not_a_500(make_client) -> None:
    """Inputs schemathesis turned into 5xx or a broken stream, each now a 400 with a reason."""
    client, runtime = make_client(admin_users=["root"])
    root = {"X-User-Id": "root"}
    too_big = 2**63
    for method, url, body, reason in (
        # SQLite (and Firestore) integers are 64-bit: an OverflowError in the store before.
        ("POST", "/v1/admin/apps/onemind/rollback", {"version": too_big}, "version"),
        ("GET", f"/v1/sessions/s1?page_token={too_big}", None, "page_token"),
        ("PATCH", "/v1/me/profile", {"preferences": {"push_settings": {"a": too_big}}}, "a"),
    ):
        response = await client.request(method, url, json=body, headers=root)
        assert response.status_code == 400, (url, response.text)
        assert reason in response.json()["error"]["message"]
    # A lone UTF-16 surrogate is valid JSON but no UTF-8 text: the reply's stream broke
    # mid-way and its commit failed before; now it is refused and nothing is stored.
    raw = b'{"session_id": "u1", "message": "hi \\ud800 there"}'
    refused = await client.post(
        "/v1/chat", content=raw, headers={**root, "content-type": "application/json"}
    )
    assert refused.status_code == 400 and "Unicode" in refused.json()["error"]["message"]
    assert await runtime.store.list_sessions(app="onemind", user_id="root") == []

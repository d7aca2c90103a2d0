"""MCP toolsets end to end in-process: an admin configures a real MCP server (the `mcp`
package's server, in a subprocess) for an app; turns through the chat API see its allowed
tools, call them, and show the calls in the stream like any tool. A server that hangs or dies
costs a bounded wait and never fails a turn; its breaker then stops trying."""

from __future__ import annotations

import sys

import httpx
import pytest

from tests.support.scripted_model import ScriptedLlm, call
from tests.support.sse import of_type, parse_frames, streamed_text

ADMIN = {"X-User-Id": "root"}
ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}
CONFIG = "/v1/admin/apps/onemind/config"


def _server(port: int, transport: str = "streamable_http", **extra: object) -> dict:
    path = "/sse" if transport == "sse" else "/mcp"
    return {
        "name": "calc",
        "transport": transport,
        "url": f"http://127.0.0.1:{port}{path}",
        "allowed_tools": ["add", "whoami", "crash"],
        **extra,
    }


async def _configure(client: httpx.AsyncClient, *servers: dict) -> None:
    response = await client.put(CONFIG, json={"mcp_toolsets": list(servers)}, headers=ADMIN)
    assert response.status_code == 200, response.text


async def _turn(client: httpx.AsyncClient, headers=ALICE, text: str = "help") -> list[dict]:  # type: ignore[no-untyped-def]
    response = await client.post("/v1/chat", json={"message": text}, headers=headers)
    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done
    return parts


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_allowed_mcp_tools_are_offered_called_and_streamed(
    make_client, mcp_server, transport
) -> None:
    server = mcp_server(transport)
    model = ScriptedLlm(script=[call("calc_add", a=2, b=3), "The sum is 5."])
    client, _ = make_client(model=model, admin_users=["root"])
    await _configure(client, _server(server.port, transport.replace("-", "_")))

    parts = await _turn(client, text="what is 2 + 3?")
    offered = set(model.requests[0].tools_dict)
    assert {"calc_add", "calc_whoami", "calc_crash"} <= offered
    assert "calc_delete_everything" not in offered  # not on the allow-list
    assert {"advance_stage", "retrieve_wisdom", "save_crystal"} <= offered  # the app's own
    (tool_call,) = of_type(parts, "tool-input-available")
    assert tool_call["toolName"] == "calc_add" and tool_call["input"] == {"a": 2, "b": 3}
    (output,) = of_type(parts, "tool-output-available")
    assert "5" in str(output["output"])
    assert not output["output"].get("isError") and not output["output"].get("is_error")
    assert streamed_text(parts) == "The sum is 5."


async def test_sessions_are_pooled_per_user_and_never_shared(make_client, mcp_server) -> None:
    server = mcp_server()
    script = []
    for _ in range(3):
        script += [call("calc_whoami"), "noted"]
    model = ScriptedLlm(script=script)
    client, runtime = make_client(model=model, admin_users=["root"])
    await _configure(client, _server(server.port))

    def session_of(parts: list[dict]) -> str:
        (output,) = of_type(parts, "tool-output-available")
        return str(output["output"])

    alice_first = session_of(await _turn(client, ALICE))
    alice_again = session_of(await _turn(client, ALICE))
    bob = session_of(await _turn(client, BOB))
    assert "session-" in alice_first
    assert alice_first == alice_again  # the pooled session is reused across her turns
    assert bob != alice_first  # another user never gets her session
    assert runtime.mcp.size == 2


async def test_a_hanging_server_costs_a_bounded_wait_then_its_breaker_opens(
    make_client, mcp_server
) -> None:
    server = mcp_server("hang")
    model = ScriptedLlm(script=["first", "second", "third"])
    client, _ = make_client(
        model=model, admin_users=["root"], mcp_breaker_failures=2, mcp_breaker_cooldown_s=60
    )
    await _configure(client, _server(server.port, timeout_s=0.5))

    for expected in ("first", "second", "third"):
        parts = await _turn(client)
        assert streamed_text(parts) == expected  # the turn goes on without the server's tools
        assert of_type(parts, "error") == []
    for request in model.requests:
        assert not any(name.startswith("calc_") for name in request.tools_dict)
    attempts = server.log().count("connection")
    assert attempts >= 1
    await _turn(client)  # the breaker is open: no new connection is tried
    assert server.log().count("connection") == attempts


async def test_a_server_that_dies_mid_call_gives_the_model_an_error(
    make_client, mcp_server
) -> None:
    server = mcp_server()
    model = ScriptedLlm(
        script=[
            call("calc_crash"),
            "The tool broke; answering without it.",
            call("calc_add", a=1, b=1),
            "Still without it.",
        ]
    )
    client, _ = make_client(model=model, admin_users=["root"])
    await _configure(client, _server(server.port, call_timeout_s=3))

    parts = await _turn(client)
    (output,) = of_type(parts, "tool-output-available")
    assert "error" in output["output"]
    assert streamed_text(parts) == "The tool broke; answering without it."
    assert server.process.wait(timeout=10) == 3  # it really died

    # The next turn: the model still calls the (cached) tool; the dead server is an error
    # result, not a failed turn.
    parts = await _turn(client)
    assert of_type(parts, "error") == []
    assert "calc_add" in model.requests[2].tools_dict
    (output,) = of_type(parts, "tool-output-available")
    assert "error" in output["output"], output
    assert streamed_text(parts) == "Still without it."


async def test_stdio_servers_only_when_allowed_for_local_runs(make_client) -> None:
    command = [sys.executable, "-m", "tests.support.mcp_server", "--transport", "stdio"]
    body = {
        "mcp_toolsets": [
            {"name": "local", "transport": "stdio", "command": command, "allowed_tools": ["add"]}
        ]
    }
    client, _ = make_client(admin_users=["root"])
    refused = await client.put(CONFIG, json=body, headers=ADMIN)
    assert refused.status_code == 400
    assert "stdio MCP servers are for local runs only" in refused.json()["error"]["message"]

    model = ScriptedLlm(script=[call("local_add", a=20, b=22), "42."])
    local, _ = make_client(model=model, admin_users=["root"], mcp_allow_stdio=True)
    assert (await local.put(CONFIG, json=body, headers=ADMIN)).status_code == 200
    parts = await _turn(local)
    (output,) = of_type(parts, "tool-output-available")
    assert "42" in str(output["output"]) and "error" not in output["output"]

"""MCP tools through the running chat server: an admin points onemind at a real MCP server
(the `mcp` package's, in a subprocess); the model (Gemini's wire format, a local fake) calls
one of its tools and the UI stream shows the call and its result like any tool's."""

from __future__ import annotations

import subprocess
import sys

import httpx

from tests.e2e.conftest import REPO, base_env, start_server, stop_server
from tests.integration.mcp.conftest import McpProcess, wait_for_port
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, function_call, text
from tests.support.sse import of_type, parse_frames, streamed_text


def test_an_mcp_tool_call_streams_like_any_tool(tmp_path) -> None:
    mcp_port = free_port()
    mcp = McpProcess(
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.mcp_server", "--port", str(mcp_port)],
            cwd=REPO,
            stdout=(tmp_path / "mcp.log").open("wb"),
            stderr=subprocess.STDOUT,
        ),
        mcp_port,
        str(tmp_path / "mcp.log"),
    )
    try:
        wait_for_port(mcp)
        with FakeGemini() as gemini:
            gemini.enqueue(function_call("calc_add", a=19, b=23), text("It is 42."))
            port = free_port()
            env = base_env(
                PORT=str(port),
                CONFIDANT_SQLITE_PATH=str(tmp_path / "mcp.db"),
                CONFIDANT_MODEL="gemini",
                CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
                CONFIDANT_ADMIN_USERS='["root"]',
                GOOGLE_API_KEY="test-key",
            )
            server = start_server([sys.executable, "-m", "confidant.local_server"], env, port)
            try:
                configured = httpx.put(
                    f"{server.base_url}/v1/admin/apps/onemind/config",
                    json={
                        "mcp_toolsets": [
                            {
                                "name": "calc",
                                "transport": "streamable_http",
                                "url": f"http://127.0.0.1:{mcp_port}/mcp",
                                "allowed_tools": ["add"],
                            }
                        ]
                    },
                    headers={"X-User-Id": "root"},
                    timeout=10,
                )
                assert configured.status_code == 200, configured.text
                response = httpx.post(
                    f"{server.base_url}/v1/chat",
                    json={"message": "what is 19 + 23?"},
                    headers={"X-User-Id": "mcp-user"},
                    timeout=60,
                )
            finally:
                stop_server(server)
            requests = list(gemini.requests)
    finally:
        mcp.kill()

    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    (call,) = of_type(parts, "tool-input-available")
    assert call["toolName"] == "calc_add" and call["input"] == {"a": 19, "b": 23}
    (output,) = of_type(parts, "tool-output-available")
    assert "42" in str(output["output"])
    assert streamed_text(parts) == "It is 42."
    assert "calc_add" in requests[0].function_names
    assert "calc_whoami" not in requests[0].function_names  # not on the allow-list
    (answered,) = requests[1].function_responses
    assert answered["name"] == "calc_add" and "42" in str(answered["response"])

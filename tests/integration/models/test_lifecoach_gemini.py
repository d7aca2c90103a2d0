"""The lifecoach app on the Gemini wire format: its tools' declarations as Gemini receives them,
and a state write proposed by the model committed to the profile."""

from __future__ import annotations

import httpx

from confidant.bootstrap import build_runtime
from tests.integration.models.test_gemini_http import settings_for
from tests.support.fake_gemini import FakeGemini, function_call
from tests.support.sse import of_type, parse_frames
from tests.unit.conftest import asgi_app


async def test_state_tools_declare_json_schemas_and_write_through_the_turn(
    gemini: FakeGemini, tmp_path
) -> None:
    gemini.enqueue(
        function_call("write_state", section="goals", data={"year": {"title": "run a 10k"}}),
        "Saved.",
    )
    runtime = build_runtime(settings_for(gemini.base_url, sqlite_path=str(tmp_path / "g.db")))
    try:
        transport = httpx.ASGITransport(app=asgi_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post(
                "/v1/chat",
                json={"app": "lifecoach", "skill": "career", "message": "save my goal"},
                headers={"X-User-Id": "gem"},
            )
        parts, done = parse_frames(response.text)
        assert done and parts[-1]["type"] == "finish", parts
        assert of_type(parts, "tool-output-available")[0]["output"]["status"] == "ok"
        declarations = {
            d["name"]: d
            for tool in gemini.requests[0].tools
            for d in tool.get("functionDeclarations", [])
        }
        assert set(declarations) == {"read_state", "write_state", "append_to_list"}
        # google-genai sends the field in snake case (proto JSON accepts either spelling).
        declared = declarations["write_state"]
        write = declared.get("parametersJsonSchema") or declared["parameters_json_schema"]
        assert write["properties"]["data"] == {
            "type": "object",
            "description": "The data to merge in.",
        }
        assert "LIFECOACH_SKILL: career" in gemini.requests[0].system_instruction
        profile = await runtime.store.load_profile("gem")
        assert profile["skills"]["career"]["goals"] == {"year": {"title": "run a 10k"}}
    finally:
        await runtime.close()

"""The offline scripted model on its own: streaming shape, script decisions, registration."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models import LLMRegistry, LlmRequest, LlmResponse
from google.genai import types

from agents.offline import DEFAULT_MODEL_NAME, OfflineModel
from agents.offline.onemind_model import crystal_name, plan_turn
from agents.onemind.stages import Stage


def _request(stage: Stage, language: str, contents: list[types.Content]) -> LlmRequest:
    instruction = f"# SESSION\nCURRENT_STAGE: {stage.value}\nLANGUAGE: {language}\n"
    return LlmRequest(
        contents=contents, config=types.GenerateContentConfig(system_instruction=instruction)
    )


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _response(name: str, result: dict[str, Any]) -> types.Content:
    part = types.Part.from_function_response(name=name, response=result)
    return types.Content(role="user", parts=[part])


async def _collect(model: OfflineModel, request: LlmRequest, stream: bool) -> list[LlmResponse]:
    return [r async for r in model.generate_content_async(request, stream=stream)]


async def test_streaming_yields_partials_then_one_aggregated_final() -> None:
    request = _request(Stage.AWARENESS, "en", [_user("I keep avoiding my thesis.")])
    streamed = await _collect(OfflineModel(), request, stream=True)
    *partials, final = streamed
    assert len(partials) >= 2 and all(r.partial for r in partials)
    assert not final.partial
    assert final.usage_metadata is not None
    final_text = final.content.parts[0].text if final.content and final.content.parts else ""
    joined = "".join(p.content.parts[0].text or "" for p in partials if p.content)
    assert joined == final_text
    assert "avoiding my thesis" in final_text

    (single,) = await _collect(OfflineModel(), request, stream=False)
    assert not single.partial
    assert single.content == final.content


async def test_function_call_is_one_non_partial_response() -> None:
    request = _request(Stage.AWARENESS, "zh", [_user("我总在拖延"), _user("是的，我怕被评判")])
    responses = await _collect(OfflineModel(), request, stream=True)
    assert len(responses) == 1
    (response,) = responses
    assert not response.partial
    assert response.content is not None and response.content.parts
    function_call = response.content.parts[0].function_call
    assert function_call is not None and function_call.name == "advance_stage"
    assert function_call.args == {
        "next_stage": Stage.INTEGRATION.value,
        "summary": "卡点：是的，我怕被评判",
    }


@pytest.mark.parametrize("language", ["en", "zh"])
def test_error_result_gets_a_short_safe_text_not_a_retry(language: str) -> None:
    contents = [_user("hi"), _response("advance_stage", {"status": "error", "reason": "x"})]
    turn = plan_turn(_request(Stage.INTEGRATION, language, contents))
    assert turn.call_name is None
    assert turn.text


def test_other_agents_quotes_are_not_user_messages() -> None:
    quoted = types.Content(
        role="user",
        parts=[types.Part(text="For context: below is a transcript ..."), types.Part(text="x")],
    )
    turn = plan_turn(_request(Stage.AWARENESS, "en", [quoted, _user("I feel stuck")]))
    assert turn.call_name is None  # still the first own message: reflect, do not advance
    assert turn.text and "I feel stuck" in turn.text


def test_missing_markers_fall_back_to_a_safe_english_text() -> None:
    turn = plan_turn(LlmRequest(contents=[_user("hello")]))
    assert turn.call_name is None
    assert turn.text and turn.text.isascii()


def test_wisdom_reply_without_passages() -> None:
    contents = [_user("a"), _response("retrieve_wisdom", {"status": "ok", "passages": []})]
    turn = plan_turn(_request(Stage.INTEGRATION, "en", contents))
    assert turn.text and "protecting" in turn.text


def test_crystal_names_drop_lead_ins() -> None:
    assert crystal_name("I learned that starting small feels safe.", "en") == (
        "Starting small feels safe"
    )
    assert crystal_name("我发现从小处开始会让我感到安全。", "zh") == "从小处开始会让我感到"


def test_model_metadata_and_no_global_registration() -> None:
    model = OfflineModel()
    assert model.model == DEFAULT_MODEL_NAME
    assert model.chunk_delay_s == 0.0
    assert model.capabilities.output_schema_and_tools is True
    assert OfflineModel.supported_models() == [r"offline-.*"]
    # Importing the module registers nothing: the composition root chooses the model.
    with pytest.raises(ValueError):
        LLMRegistry.resolve(DEFAULT_MODEL_NAME)

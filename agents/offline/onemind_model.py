"""A deterministic, offline stand-in for the LLM that plays the onemind protocol.

It reads the stage and language from the marker lines of the system instruction and decides
from the conversation history what to do next (reply, or call a tool), so a demo or a test can
walk through all four stages without network access. One instance serves concurrent calls:
every decision is derived from the request alone.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.genai import types

from agents.offline import extractors
from agents.offline.lifecoach_model import plan_lifecoach_turn
from agents.offline.relationship_model import plan_relationship_turn
from agents.offline.scripted import ScriptedTurn, ScriptPlanner
from agents.offline.scripted import instruction_text as _instruction_text
from agents.offline.taskflow_model import plan_taskflow_turn
from agents.onemind.prompts import LANGUAGE_MARKER, STAGE_MARKER
from agents.onemind.stages import Stage, parse_stage
from agents.onemind.tools import ADVANCE_STAGE, RETRIEVE_WISDOM, SAVE_CRYSTAL, STATUS_ERROR

DEFAULT_MODEL_NAME = "offline-onemind"
# Apps' scripts, each selected by its own marker in the instruction (None when not its agent);
# a request no script claims plays the onemind protocol.
APP_SCRIPTS: tuple[ScriptPlanner, ...] = (
    plan_relationship_turn,
    plan_taskflow_turn,
    plan_lifecoach_turn,
)
STREAM_CHUNKS = 4
WISDOM_QUERY_MESSAGES = 2

_STAGE_RE = re.compile(rf"^{STAGE_MARKER}:\s*(\S+)\s*$", re.MULTILINE)
_LANGUAGE_RE = re.compile(rf"^{LANGUAGE_MARKER}:\s*(zh|en)\s*$", re.MULTILINE)
# Other agents' (and plugins') replies reach the model as user-role "For context:" quotes.
_CONTEXT_PREFIX = "For context:"
_QUOTE_MARKER = "<<<BEGIN_QUOTED_AGENT_CONTENT>>>"
_SENTENCE_END_RE = re.compile(r"[.!?。！？…;；\n]+")

# The scripted lines. Each is at most three sentences and never preaches ("you should").
LINES: dict[str, dict[str, str]] = {
    "en": {
        "reflect": (
            'It sounds like one part of you is pulling toward "{snippet}" while another part'
            " holds back. That tug-of-war deserves to be seen clearly. What feels most stuck"
            " right now?"
        ),
        "weave": (
            'One idea that may help here is "{title}". Perhaps both parts of you are protecting'
            " something you care about. What might they have in common?"
        ),
        "weave_without_wisdom": (
            "Perhaps both parts of you are protecting something you care about. What might they"
            " have in common?"
        ),
        "invite_action": (
            "Those two parts sound ready to work together. What is the smallest possible step,"
            " something that takes two minutes, that honours both of them?"
        ),
        "invite_reflection": (
            '"{snippet}" sounds like a real, doable step. As you take it, or imagine taking it,'
            " what do you notice inside, and what does it teach you?"
        ),
        "closing": (
            'I have saved this as your integration crystal "{name}". You moved from feeling'
            " stuck to a step of your own. Come back to it whenever you need it."
        ),
        "after_crystal": (
            "Your crystal is already saved. Take a moment to let what you learned settle."
            " What feels different now?"
        ),
        "safe": "Let's slow down for a moment. What feels most true inside you right now?",
        "stuck_point": "Stuck point: {snippet}",
        "integration": "Integration: {snippet}",
        "micro_action": "Micro action: {snippet}",
    },
    "zh": {
        "reflect": (
            "听起来，你心里有一部分想要“{snippet}”，另一部分却在往回拉。"
            "这种拉扯值得被好好看见。此刻，最让你卡住的是什么？"
        ),
        "weave": (
            "有一个想法也许能帮到你：“{title}”。也许这两个部分都在守护你在乎的东西。"
            "它们有什么共同之处呢？"
        ),
        "weave_without_wisdom": "也许这两个部分都在守护你在乎的东西。它们有什么共同之处呢？",
        "invite_action": (
            "这两个部分似乎已经可以一起合作了。有没有一个最小的、两分钟就能做到的行动，"
            "能同时照顾到它们？"
        ),
        "invite_reflection": (
            "“{snippet}”听起来是真实可行的一步。当你去做或想象去做它时，"
            "你内心注意到了什么，又学到了什么？"
        ),
        "closing": (
            "我已经把这次的成长保存为你的整合结晶“{name}”。你从卡住走到了属于自己的一步。"
            "需要时，随时可以回来看看它。"
        ),
        "after_crystal": (
            "你的结晶已经保存好了。给自己一点时间，让这份体会慢慢沉淀。现在你感觉有什么不同吗？"
        ),
        "safe": "我们先慢一点。此刻你内心最真实的感受是什么？",
        "stuck_point": "卡点：{snippet}",
        "integration": "整合：{snippet}",
        "micro_action": "最小行动：{snippet}",
    },
}


@dataclass(frozen=True)
class _History:
    user_texts: list[str]  # the user's own messages, oldest first
    last_responses: list[types.FunctionResponse]  # set when the last content answers a call
    saved_crystal: bool


def _is_context_quote(text: str) -> bool:
    return text.startswith(_CONTEXT_PREFIX) or _QUOTE_MARKER in text


def _read_history(contents: Sequence[types.Content]) -> _History:
    user_texts: list[str] = []
    saved_crystal = False
    for content in contents:
        parts = content.parts or []
        for part in parts:
            response = part.function_response
            if response and response.name == SAVE_CRYSTAL:
                saved_crystal = saved_crystal or (response.response or {}).get("status") == "ok"
        if content.role != "user":
            continue
        texts = [part.text for part in parts if part.text and not part.thought]
        own_texts = [text for text in texts if not _is_context_quote(text)]
        if own_texts and len(own_texts) == len(texts):
            user_texts.append(" ".join(own_texts))
    last_parts = (contents[-1].parts or []) if contents else []
    last_responses = [part.function_response for part in last_parts if part.function_response]
    return _History(user_texts, last_responses, saved_crystal)


def snippet(text: str, language: str) -> str:
    """A short, single-clause quote of the user's words (no sentence breaks inside)."""
    flat = _SENTENCE_END_RE.sub(" ", " ".join(text.split())).strip(" ,，")
    if language == "zh":
        return flat[:24]
    words = flat.split()
    return " ".join(words[:12]) if words else flat


# Lead-ins that say nothing about the insight itself; dropped from crystal names.
_NAME_LEAD_INS: dict[str, tuple[str, ...]] = {
    "en": (
        "i learned that",
        "i learned",
        "i noticed that",
        "i noticed",
        "i realized that",
        "i realised that",
        "i see that",
        "i feel that",
    ),
    "zh": ("我发现", "我学到了", "我学到", "我意识到", "我注意到", "我明白了", "我觉得"),
}


def crystal_name(insight: str, language: str) -> str:
    """A short name for the crystal, taken from the user's own words."""
    quoted = snippet(insight, language)
    for lead_in in _NAME_LEAD_INS[language]:
        if quoted.casefold().startswith(lead_in) and len(quoted) > len(lead_in):
            quoted = quoted[len(lead_in) :].strip(" ,，：:")
            break
    if language == "zh":
        return quoted[:10]
    return " ".join(quoted.split()[:5]).capitalize()


def plan_turn(llm_request: LlmRequest) -> ScriptedTurn:
    """The scripted decision for this request (pure: depends on the request only)."""
    instruction = _instruction_text(llm_request.config)
    stage_match = _STAGE_RE.search(instruction)
    language_match = _LANGUAGE_RE.search(instruction)
    stage = parse_stage(stage_match.group(1)) if stage_match else None
    language = language_match.group(1) if language_match else "en"
    lines = LINES[language]
    history = _read_history(llm_request.contents)
    latest_user = history.user_texts[-1] if history.user_texts else ""
    said = snippet(latest_user, language)

    if history.last_responses:
        return _after_tool(history.last_responses[-1], stage, language, history.user_texts)
    if stage is None or not latest_user:
        return ScriptedTurn(text=lines["safe"])
    if stage is Stage.AWARENESS:
        if len(history.user_texts) <= 1:
            return ScriptedTurn(text=lines["reflect"].format(snippet=said))
        return _advance(Stage.INTEGRATION, lines["stuck_point"].format(snippet=said))
    if stage is Stage.INTEGRATION:
        return _advance(Stage.MICRO_ACTION, lines["integration"].format(snippet=said))
    if stage is Stage.MICRO_ACTION:
        return _advance(Stage.SOLIDIFICATION, lines["micro_action"].format(snippet=said))
    if history.saved_crystal:
        return ScriptedTurn(text=lines["after_crystal"])
    return ScriptedTurn(
        call_name=SAVE_CRYSTAL,
        call_args={"name": crystal_name(latest_user, language), "insight": latest_user.strip()},
    )


def plan_scripted_turn(llm_request: LlmRequest) -> ScriptedTurn:
    """The first app script that claims the request, else the onemind protocol."""
    for planner in APP_SCRIPTS:
        turn = planner(llm_request)
        if turn is not None:
            return turn
    return plan_turn(llm_request)


def _advance(target: Stage, summary: str) -> ScriptedTurn:
    return ScriptedTurn(
        call_name=ADVANCE_STAGE, call_args={"next_stage": target.value, "summary": summary}
    )


def _after_tool(
    response: types.FunctionResponse,
    stage: Stage | None,
    language: str,
    user_texts: Sequence[str],
) -> ScriptedTurn:
    latest_user = user_texts[-1] if user_texts else ""
    # The stuck point usually spans the first exchanges: search with both of them.
    wisdom_query = " ".join(user_texts[-WISDOM_QUERY_MESSAGES:])
    lines = LINES[language]
    result: Mapping[str, Any] = response.response or {}
    if result.get("status") == STATUS_ERROR:
        return ScriptedTurn(text=lines["safe"])  # never retry: that could loop
    if response.name == RETRIEVE_WISDOM:
        passages = result.get("passages") or []
        if passages:
            return ScriptedTurn(text=lines["weave"].format(title=passages[0].get("title", "")))
        return ScriptedTurn(text=lines["weave_without_wisdom"])
    if response.name == SAVE_CRYSTAL:
        return ScriptedTurn(text=lines["closing"].format(name=result.get("name", "")))
    if response.name == ADVANCE_STAGE:
        if stage is Stage.INTEGRATION and latest_user:
            return ScriptedTurn(call_name=RETRIEVE_WISDOM, call_args={"query": wisdom_query})
        if stage is Stage.MICRO_ACTION:
            return ScriptedTurn(text=lines["invite_action"])
        if stage is Stage.SOLIDIFICATION:
            return ScriptedTurn(
                text=lines["invite_reflection"].format(snippet=snippet(latest_user, language))
            )
    return ScriptedTurn(text=lines["safe"])


def _request_text(contents: Sequence[types.Content]) -> str:
    return "\n".join(part.text or "" for content in contents for part in content.parts or [])


def _usage(llm_request: LlmRequest, output: str) -> types.GenerateContentResponseUsageMetadata:
    # A rough 4-characters-per-token estimate, so usage metrics have something to record.
    prompt_chars = len(_instruction_text(llm_request.config)) + sum(
        len(part.text or "") for content in llm_request.contents for part in content.parts or []
    )
    prompt_tokens = math.ceil(prompt_chars / 4)
    output_tokens = math.ceil(len(output) / 4)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_tokens,
        candidates_token_count=output_tokens,
        total_token_count=prompt_tokens + output_tokens,
    )


def _text_chunks(text: str, count: int = STREAM_CHUNKS) -> list[str]:
    size = max(1, math.ceil(len(text) / count))
    return [text[start : start + size] for start in range(0, len(text), size)]


class OfflineModel(BaseLlm):
    """Scripted onemind model: no network, deterministic, streams like Gemini in SSE mode."""

    model: str = DEFAULT_MODEL_NAME
    chunk_delay_s: float = 0.0  # pause between streamed chunks, to make demos look typed

    SUPPORTED_MODEL_PATTERNS: ClassVar[list[str]] = [r"offline-.*"]

    @classmethod
    def supported_models(cls) -> list[str]:
        return list(cls.SUPPORTED_MODEL_PATTERNS)

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        extracted = extractors.answer(
            _instruction_text(llm_request.config), _request_text(llm_request.contents)
        )
        if extracted is not None:  # a post-turn job's extractor, not the coach
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=extracted)]),
                turn_complete=True,
                finish_reason=types.FinishReason.STOP,
                usage_metadata=_usage(llm_request, extracted),
                model_version=self.model,
            )
            return
        turn = plan_scripted_turn(llm_request)
        if turn.call_name is not None:
            # Function calls arrive whole, as one final response (as with Gemini's last chunk).
            call = types.Part.from_function_call(name=turn.call_name, args=turn.call_args)
            # A text may lead the call (e.g. a question, then the pause that awaits its answer).
            lead = [types.Part(text=turn.text)] if turn.text else []
            yield LlmResponse(
                content=types.Content(role="model", parts=[*lead, call]),
                finish_reason=types.FinishReason.STOP,
                usage_metadata=_usage(llm_request, str(turn.call_args)),
                model_version=self.model,
            )
            return
        text = turn.text or ""
        if stream:
            for chunk in _text_chunks(text):
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                    partial=True,
                    model_version=self.model,
                )
                if self.chunk_delay_s > 0:
                    await asyncio.sleep(self.chunk_delay_s)
        # The final, aggregated response: the only one ADK persists and acts on.
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            partial=False,
            turn_complete=True,
            finish_reason=types.FinishReason.STOP,
            usage_metadata=_usage(llm_request, text),
            model_version=self.model,
        )

"""The offline script of the relationship engine: deterministic router decisions, transfers,
both pipelines, specialist replies and profile proposals, all from cues in the message.

It claims a request only when the system instruction carries the relationship marker line
(`RELATIONSHIP_AGENT: <role>`), so the offline model dispatches per app with no app names in
shared code. Replies quote what they received (the user's words, the pipeline's first step), so
tests can see what reached each agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from google.adk.models import LlmRequest
from google.genai import types

from agents.offline.scripted import ScriptedTurn, instruction_text
from agents.relationship import prompts, roles
from agents.relationship.tools import PERSON_TARGET, SELF_TARGET, UPDATE_PROFILE

TRANSFER_TO_AGENT = "transfer_to_agent"
PREAMBLE_HEAD_CHARS = 60

_ROLE_RE = re.compile(rf"^{prompts.AGENT_MARKER}:\s*(\w+)\s*$", re.MULTILINE)
_LANGUAGE_RE = re.compile(rf"^{prompts.LANGUAGE_MARKER}:\s*(zh|en)\s*$", re.MULTILINE)
_PERSON_RE = re.compile(rf"^{prompts.PERSON_MARKER}:\s*(.+?)\s*$", re.MULTILINE)
_PIPELINE_RE = re.compile(
    rf"^{re.escape(prompts.PIPELINE_BEGIN)}\n(.*?)\n{re.escape(prompts.PIPELINE_END)}$",
    re.MULTILINE | re.DOTALL,
)
_CONTEXT_PREFIX = "For context:"
_SENTENCE_END_RE = re.compile(r"[.!?。！？…;；\n]+")
_SELF_FACT_RE = re.compile(r"\b(?:i am|i'm)\s+([^.!?]{3,80})", re.IGNORECASE)
_SELF_FACT_ZH_RE = re.compile(r"我是([^，。！？]{2,40})")

# Cue phrases (casefolded) that stand for what the user asks for.
PROFILE_UPDATE_CUES = (
    "update my profile",
    "save to my profile",
    "save this to my profile",
    "update their profile",
    "update his profile",
    "update her profile",
    "save to their profile",
    "更新我的档案",
    "更新档案",
    "保存到档案",
    "存到档案",
    "记到档案",
)
PERSON_PROFILE_CUES = (
    "their profile",
    "his profile",
    "her profile",
    "ta的档案",
    "他的档案",
    "她的档案",
)
WRITE_CUES = (
    "what should i say",
    "what do i say",
    "wording",
    "write",
    "draft",
    "message i can send",
    "text to send",
    "怎么说",
    "话术",
    "怎么回",
    "帮我写",
    "发什么",
)
PLAN_CUES = (
    "plan",
    "strategy",
    "what should i do",
    "how should i",
    "how do i",
    "next step",
    "计划",
    "策略",
    "怎么办",
    "下一步",
)
ANALYZE_CUES = (
    "why",
    "what does",
    "what did",
    "mean",
    "analy",
    "read into",
    "为什么",
    "什么意思",
    "分析",
)
PROFILE_CUES = ("profile", "personality", "what kind of person", "画像", "性格", "档案")

LINES: dict[str, dict[str, str]] = {
    "en": {
        "someone": "the other person",
        "analyzer": (
            'Reading what is going on with {person}: on the surface, "{said}" is about the'
            " words; underneath it is about closeness and safety. {person} may be protecting"
            " themselves by pulling back, a common withdrawing pattern under stress."
            " Recommended response: acknowledge the feeling first, then ask one open question."
        ),
        "strategist": (
            'Plan with {person}: the goal is one calm conversation about "{said}". Step 1: open'
            " with appreciation. Step 2: name one concrete need. IF {person} gets defensive,"
            " THEN pause and reflect the feeling back; IF {person} engages, THEN agree on one"
            " small change. Success signal: {person} starts sharing more on their own."
        ),
        "writer": (
            "Three messages you could send {person}: 1) \"I've been thinking about what"
            ' happened, and I want to understand you better." 2) "Can we talk tonight? I miss'
            ' how easy things felt between us." 3) "No pressure, I am here when you are'
            ' ready." Send one when you both have time, and give a day for an answer.'
        ),
        "profile": (
            "Profile of {person}: values security, opens up slowly, and responds best to calm,"
            " specific words. Interaction guide: be concrete, avoid blame, leave room to think."
        ),
        "after_pipeline": {
            "strategist": 'Building on the analysis above ("{head}"): ',
            "writer": 'Following the plan above ("{head}"): ',
        },
        "saved": "I saved that to the profile. ",
    },
    "zh": {
        "someone": "对方",
        "analyzer": (
            "解读你和{person}之间的状况：表面上，“{said}”是在说字面的事；深层是对亲近和安全感的需要。"
            "{person}可能在压力下用退缩保护自己。建议回应：先接住情绪，再问一个开放式问题。"
        ),
        "strategist": (
            "和{person}相处的计划：目标是就“{said}”进行一次平静的对话。第一步：先表达欣赏。"
            "第二步：说出一个具体的需要。如果{person}防御，那么先停一下、回应情绪；"
            "如果{person}愿意交流，那么约定一个小改变。成功信号：{person}开始主动分享。"
        ),
        "writer": (
            "你可以发给{person}的三条消息：1）“我一直在想那件事，想更懂你一些。”"
            "2）“今晚能聊聊吗？我想念我们之间轻松的感觉。”3）“不着急，你准备好了我都在。”"
            "挑一个双方都有空的时间发，给对方一天时间回复。"
        ),
        "profile": (
            "{person}的画像：重视安全感，慢热，对平静、具体的表达反应最好。"
            "相处指南：具体、不指责、给空间。"
        ),
        "after_pipeline": {
            "strategist": "基于上面的分析（“{head}”）：",
            "writer": "按照上面的计划（“{head}”）：",
        },
        "saved": "我已经把这条信息存进档案。",
    },
}


def _has(text: str, cues: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(cue in folded for cue in cues)


def route_for(message: str) -> dict[str, str]:
    """The router's decision for a message (the seed's rules, by cue)."""
    if _has(message, PROFILE_UPDATE_CUES):
        return {"mode": roles.RUNNER, "reason": "profile update requested"}
    plan, write, analyze = (_has(message, c) for c in (PLAN_CUES, WRITE_CUES, ANALYZE_CUES))
    if plan and write:
        return {"mode": roles.PIPE_STRATEGIST_WRITER, "reason": "plan and wording"}
    if analyze and plan:
        return {"mode": roles.PIPE_ANALYZE_STRATEGIST, "reason": "reading and plan"}
    return {"mode": roles.RUNNER, "reason": "one need"}


def specialist_for(message: str) -> str:
    """The orchestrator's transfer target for a message."""
    if _has(message, WRITE_CUES):
        return roles.WRITER
    if _has(message, PLAN_CUES):
        return roles.STRATEGIST
    if _has(message, PROFILE_CUES):
        return roles.PROFILE
    return roles.ANALYZER


def _own_user_texts(contents: Sequence[types.Content]) -> list[str]:
    texts: list[str] = []
    for content in contents:
        if content.role != "user":
            continue
        parts = [p.text for p in content.parts or [] if p.text and not p.thought]
        if parts and not any(text.startswith(_CONTEXT_PREFIX) for text in parts):
            texts.append(" ".join(parts))
    return texts


def _snippet(text: str, language: str) -> str:
    flat = _SENTENCE_END_RE.sub(" ", " ".join(text.split())).strip(" ,，")
    return flat[:24] if language == "zh" else " ".join(flat.split()[:12])


def _profile_update(message: str, has_person: bool) -> ScriptedTurn:
    value = re.split(r"[:：]", message, maxsplit=1)[-1].strip()[:300] or message[:300]
    if has_person and _has(message, PERSON_PROFILE_CUES):
        args = {"target": PERSON_TARGET, "field": "notes", "value": value}
    else:
        args = {"target": SELF_TARGET, "field": "about", "value": value}
    return ScriptedTurn(call_name=UPDATE_PROFILE, call_args=args)


def _orchestrate(contents: Sequence[types.Content], message: str, has_person: bool) -> ScriptedTurn:
    last_parts = (contents[-1].parts or []) if contents else []
    answered = [p.function_response for p in last_parts if p.function_response]
    if answered and answered[-1].name == UPDATE_PROFILE:
        return ScriptedTurn(call_name=TRANSFER_TO_AGENT, call_args={"agent_name": roles.PROFILE})
    if _has(message, PROFILE_UPDATE_CUES):
        return _profile_update(message, has_person)
    target = specialist_for(message)
    return ScriptedTurn(call_name=TRANSFER_TO_AGENT, call_args={"agent_name": target})


def _speak(role: str, instruction: str, contents: Sequence[types.Content], message: str) -> str:
    language_match = _LANGUAGE_RE.search(instruction)
    language = language_match.group(1) if language_match else "en"
    lines = LINES[language]
    person_match = _PERSON_RE.search(instruction)
    person = person_match.group(1) if person_match else lines["someone"]
    text = lines[role].format(person=person, said=_snippet(message, language))
    pipeline = _PIPELINE_RE.search(instruction)
    if pipeline and role in lines["after_pipeline"]:
        head = " ".join(pipeline.group(1).split())[:PREAMBLE_HEAD_CHARS]
        text = lines["after_pipeline"][role].format(head=head) + text
    saved = any(
        (p.function_response and p.function_response.name == UPDATE_PROFILE)
        or (p.text and UPDATE_PROFILE in p.text)
        for content in contents
        for p in content.parts or []
    )
    if role == roles.PROFILE and saved:
        text = lines["saved"] + text
    return text


def extract_proposals(conversation: str) -> dict[str, list[dict[str, object]]]:
    """Self-profile proposals from the user's "I am …" / "我是…" lines (the extractor's answer)."""
    proposals: list[dict[str, object]] = []
    user_lines = [
        line.removeprefix("user:").strip()
        for line in conversation.splitlines()
        if line.startswith("user:")
    ]
    for line in user_lines:
        for pattern in (_SELF_FACT_RE, _SELF_FACT_ZH_RE):
            for match in pattern.finditer(line):
                fact = match.group(0).strip()
                proposals.append(
                    {
                        "target": SELF_TARGET,
                        "changes": {"about": fact},
                        "reason": "the user said so",
                    }
                )
    return {"proposals": proposals[:3]}


def plan_relationship_turn(llm_request: LlmRequest) -> ScriptedTurn | None:
    """The scripted answer of a relationship agent; None when the request is not for one."""
    instruction = instruction_text(llm_request.config)
    role_match = _ROLE_RE.search(instruction)
    if role_match is None:
        return None
    role = role_match.group(1)
    contents = llm_request.contents
    user_texts = _own_user_texts(contents)
    message = user_texts[-1] if user_texts else ""
    has_person = _PERSON_RE.search(instruction) is not None
    if role == roles.ROUTER:
        return ScriptedTurn(text=json.dumps(route_for(message)))
    if role == roles.EXTRACTOR:
        return ScriptedTurn(text=json.dumps(extract_proposals(message)))
    if role == roles.ORCHESTRATOR:
        return _orchestrate(contents, message, has_person)
    if role in roles.SPECIALISTS:
        return ScriptedTurn(text=_speak(role, instruction, contents, message))
    return None

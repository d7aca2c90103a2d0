"""The offline script of the taskflow team: every role, deterministic, no network.

The orchestrator's next call follows from the last function response in the history (or
from the user's text when there is none); the critic, classifier and expert answer JSON from
the run's state, which their instruction carries on its `taskflow-state:` line. Rules:

* details: the title follows "add a task"; `YYYY-MM-DD` is the due date; a due date in words
  ("due friday") is passed as is, so the format check rejects it and the script retries
  without it (the malformed-call path); "it's / it is / this is about", "because", "so that",
  "done means / when …", or a longer answer to a question, is the description; `#words` are
  tags.
* the critic wants a title, a description of at least 15 characters and a due date.
* the classifier reads keywords and applies corrections such as "priority high".
* the expert has concerns when the description is thin or a high priority has no due date.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.models import LlmRequest
from google.genai import types

from agents.offline.scripted import ScriptedTurn, instruction_text
from agents.safety.plugin import LOCALE_STATE_KEY
from agents.taskflow import prompts, state_keys
from agents.taskflow.tools import (
    ASK_FOR_DETAILS,
    CONFIRM_CLASSIFICATION,
    DETAIL_CRITIC,
    PLAN_WORKFLOW,
    RECORD_DETAILS,
    REQUEST_FINAL_CONFIRMATION,
    STATUS_ERROR,
    TASK_CLASSIFIER,
    TASK_EXPERT,
    WRITE_TASK,
)

CORRECTION_PREFIX = "Correction from the user"
MIN_DESCRIPTION = 15
MIN_DESCRIPTION_ZH = 6
_CJK_RE = re.compile(r"[\u3400-\u9fff]")
_ROLE_RE = re.compile(rf"^{prompts.ROLE_MARKER}:\s*(\S+)\s*$", re.MULTILINE)
_STATE_RE = re.compile(rf"^{prompts.STATE_MARKER}:\s*(.*)$", re.MULTILINE)
_TITLE_RE = re.compile(
    r"\b(?:add|create|new|record|file|log|make)\s+(?:a\s+|an\s+)?(?:new\s+)?"
    r"(?:task|todo|to-do|ticket)\s*(?:to\s+|:|-|for\s+)?\s*(.+?)(?:[.,;!?\n]|$)"
    r"|(?:添加|新建|记录|创建)(?:一个)?(?:任务|待办)[：:\s]*(.+?)(?:[。，,；;！!？?\n]|$)",
    re.IGNORECASE,
)
_ISO_DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_WORD_DATE_RE = re.compile(
    r"\bdue\s+(?:on\s+|by\s+)?((?:next\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow)",
    re.IGNORECASE,
)
_DESCRIPTION_ZH_RE = re.compile(r"(?:内容|描述|说明|关于|目的是)[：:是\s]*(.+?)(?:[。\n]|$)")
_DESCRIPTION_RE = re.compile(
    r"(?:description:|details:|(?:it|this)(?:'s| is) about|because|so that|done (?:means|when))"
    r"\s*(.+?)(?:\n|$)",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"#(\w[\w-]*)")
_CORRECTION_RE = {
    "priority": re.compile(
        r"priority\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?(low|medium|high|urgent)", re.IGNORECASE
    ),
    "task_type": re.compile(
        r"type\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?([\w ]+?)(?:[,.;]|$)", re.IGNORECASE
    ),
    "area": re.compile(
        r"area\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?([\w ]+?)(?:[,.;]|$)", re.IGNORECASE
    ),
}
_TYPES = (
    (("refactor", "clean up", "cleanup", "tech debt", "重构", "技术债"), "Technical debt"),
    (("bug", "fix", "broken", "crash", "修复", "故障"), "Bug"),
    (("meeting", "call with", "sync", "会议", "开会"), "Meeting"),
    (("invoice", "expense", "form", "renew", "发票", "报销", "续签"), "Admin"),
)
_AREAS = (
    (
        ("billing", "invoice", "payment", "finance", "expense", "计费", "发票", "付款", "财务"),
        "Finance",
    ),
    (
        (
            "code",
            "api",
            "deploy",
            "refactor",
            "bug",
            "module",
            "service",
            "代码",
            "接口",
            "部署",
            "模块",
        ),
        "Engineering",
    ),
)
_PRIORITY_ZH = {"低": "low", "中": "medium", "高": "high", "紧急": "urgent"}
_PRIORITY_ZH_RE = re.compile(r"优先级\s*(?:应该|应)?\s*(?:是|为|改为|改成)?\s*(紧急|高|中|低)")
# What the orchestrator says, per language (the session's `locale`).
LINES: dict[str, dict[str, str]] = {
    "en": {
        "title": "What should the task be called?",
        "description": 'What exactly has to be done, and what does "done" look like?',
        "due_date": "When is it due (YYYY-MM-DD)?",
        "still_needed": "Still needed: {fields}.",
        "complete": "Title, description and due date are clear.",
        "gave_up": "I could not collect enough details ({feedback}). Nothing was filed; start"
        " again whenever you like.",
        "failed": "I could not go on: {error}.",
        "summary": '"{title}" due {due}: {task_type}, priority {priority}, area {area}.',
        "why": "Why: {reasons}",
        "is_it_right": "Is that right?",
        "expert": "Expert: {notes}",
        "write_it": "Write it?",
        "rejected": "Understood: nothing was written. Tell me what to change.",
        "done": 'Done: "{title}" is in your task list ({url}).',
        "help": "How can I help with your tasks?",
        "reasons": "From the wording, this reads as {task_type} work in {area}; nothing marks"
        " it urgent, so priority {priority}.",
        "corrected": "{field} set to {value} as you said",
    },
    "zh": {
        "title": "这个任务叫什么？",
        "description": "具体要做什么？怎样算完成？",
        "due_date": "截止日期是哪天（YYYY-MM-DD）？",
        "still_needed": "还缺少：{fields}。",
        "complete": "标题、描述和截止日期都清楚了。",
        "gave_up": "信息还不够（{feedback}），这次没有创建任务；随时可以重新开始。",
        "failed": "无法继续：{error}。",
        "summary": "“{title}”，截止 {due}：{task_type}，优先级 {priority}，领域 {area}。",
        "why": "理由：{reasons}",
        "is_it_right": "这样对吗？",
        "expert": "专家意见：{notes}",
        "write_it": "要写入吗？",
        "rejected": "好的，没有写入任何内容。告诉我需要改什么。",
        "done": "完成：“{title}”已加入你的任务列表（{url}）。",
        "help": "有什么任务需要我帮忙吗？",
        "reasons": "从描述看，这是{area}领域的{task_type}工作；"
        "没有紧急的迹象，所以优先级为 {priority}。",
        "corrected": "已按你的意见把 {field} 改为 {value}",
    },
}


# -- reading the request ------------------------------------------------------------------------


def _state(instruction: str) -> dict[str, Any]:
    match = _STATE_RE.search(instruction)
    return json.loads(match.group(1)) if match else {}


def _lines(state: Mapping[str, Any]) -> dict[str, str]:
    return LINES["zh" if state.get(LOCALE_STATE_KEY) == "zh" else "en"]


def _last_user_text(contents: Sequence[types.Content]) -> str:
    for content in reversed(contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought]
            if texts:
                return " ".join(texts)
    return ""


def _last_response(contents: Sequence[types.Content]) -> types.FunctionResponse | None:
    parts = (contents[-1].parts or []) if contents else []
    responses = [p.function_response for p in parts if p.function_response]
    return responses[-1] if responses else None


def _last_call_args(contents: Sequence[types.Content], name: str) -> dict[str, Any]:
    for content in reversed(contents):
        for part in content.parts or []:
            if part.function_call and part.function_call.name == name:
                return dict(part.function_call.args or {})
    return {}


def extract_details(text: str, *, answering: bool = False) -> dict[str, Any]:
    """Task fields found in the user's words (see the module docstring for the rules)."""
    details: dict[str, Any] = {}
    if title := _TITLE_RE.search(text):
        details["title"] = (title.group(1) or title.group(2)).strip()[:120]
    if iso := _ISO_DATE_RE.search(text):
        details["due_date"] = iso.group(1)
    elif word := _WORD_DATE_RE.search(text):
        details["due_date"] = word.group(1)  # not a date: the format check will say so
    if described := _DESCRIPTION_RE.search(text) or _DESCRIPTION_ZH_RE.search(text):
        details["description"] = described.group(1).strip()
    elif answering:
        rest = _ISO_DATE_RE.sub("", text).strip(" ,.;，。；")
        if _long_enough(rest):
            details["description"] = rest
    if tags := _TAG_RE.findall(text):
        details["tags"] = tags
    return details


# -- the orchestrator ---------------------------------------------------------------------------


def _after_record(contents: Sequence[types.Content], result: Mapping[str, Any]) -> ScriptedTurn:
    if result.get("status") == STATUS_ERROR:
        # Correct the malformed call: leave out the fields the format check named.
        bad = {str(p.get("field", "")).split(".")[0] for p in result.get("problems") or []}
        args = {k: v for k, v in _last_call_args(contents, RECORD_DETAILS).items() if k not in bad}
        if args and bad:
            return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    details = result.get("details") or {}
    return ScriptedTurn(
        call_name=DETAIL_CRITIC, call_args={"request": json.dumps(details, ensure_ascii=False)}
    )


def _after_critic(state: Mapping[str, Any], result: Mapping[str, Any]) -> ScriptedTurn:
    critique = result.get("critique") or {}
    lines = _lines(state)
    if result.get("limit_reached"):
        return ScriptedTurn(text=lines["gave_up"].format(feedback=critique.get("feedback", "")))
    if critique.get("status") == "incomplete":
        missing = list(critique.get("missing") or [])
        question = " ".join(lines.get(field, field) for field in missing)
        return ScriptedTurn(
            text=question,
            call_name=ASK_FOR_DETAILS,
            call_args={
                "question": question,
                "missing": missing,
                "feedback": critique.get("feedback", ""),
            },
        )
    details = state.get(state_keys.DETAILS) or {}
    return ScriptedTurn(
        call_name=TASK_CLASSIFIER, call_args={"request": json.dumps(details, ensure_ascii=False)}
    )


def _summary(state: Mapping[str, Any], classification: Mapping[str, Any]) -> str:
    details = state.get(state_keys.DETAILS) or {}
    return _lines(state)["summary"].format(
        title=details.get("title", ""),
        due=details.get("due_date", "-"),
        task_type=classification.get("task_type"),
        priority=classification.get("priority"),
        area=classification.get("area"),
    )


def _confirm(
    pause: str, state: Mapping[str, Any], classification: Mapping[str, Any], note: str, ask: str
) -> ScriptedTurn:
    """A text that shows the summary, then the pause that asks the human about it."""
    summary = f"{_summary(state, classification)} {note}"
    return ScriptedTurn(text=f"{summary} {ask}", call_name=pause, call_args={"summary": summary})


def plan_orchestrator(llm_request: LlmRequest, state: Mapping[str, Any]) -> ScriptedTurn:
    contents = llm_request.contents
    response = _last_response(contents)
    if response is None:
        return ScriptedTurn(
            call_name=PLAN_WORKFLOW, call_args={"request": _last_user_text(contents)}
        )
    name, result = response.name, dict(response.response or {})
    lines = _lines(state)
    if name == RECORD_DETAILS:
        return _after_record(contents, result)
    if result.get("status") == STATUS_ERROR and name != TASK_CLASSIFIER:
        return ScriptedTurn(text=lines["failed"].format(error=result.get("error", "?")))
    if name == PLAN_WORKFLOW:
        args = extract_details(_last_user_text(contents))
        return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    if name == ASK_FOR_DETAILS:
        args = extract_details(str(result.get("answer", "")), answering=True)
        return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    if name == DETAIL_CRITIC:
        return _after_critic(state, result)
    if name == TASK_CLASSIFIER:
        if result.get("status") == STATUS_ERROR:  # the correction limit: the last one stands
            return ScriptedTurn(call_name=TASK_EXPERT, call_args={"request": "review the task"})
        classification = result.get("classification") or {}
        why = lines["why"].format(reasons=classification.get("reasons"))
        return _confirm(CONFIRM_CLASSIFICATION, state, classification, why, lines["is_it_right"])
    if name == CONFIRM_CLASSIFICATION:
        if result.get("approved"):
            return ScriptedTurn(call_name=TASK_EXPERT, call_args={"request": "review the task"})
        correction = f"{CORRECTION_PREFIX}: {result.get('answer', '')}"
        return ScriptedTurn(call_name=TASK_CLASSIFIER, call_args={"request": correction})
    if name == TASK_EXPERT:
        notes = lines["expert"].format(notes=(result.get("review") or {}).get("notes", ""))
        classification = state.get(state_keys.CLASSIFICATION) or {}
        return _confirm(REQUEST_FINAL_CONFIRMATION, state, classification, notes, lines["write_it"])
    if name == REQUEST_FINAL_CONFIRMATION:
        if result.get("approved"):
            return ScriptedTurn(call_name=WRITE_TASK, call_args={})
        return ScriptedTurn(text=lines["rejected"])
    if name == WRITE_TASK:
        url = (result.get("task") or {}).get("url")
        return ScriptedTurn(text=lines["done"].format(title=result.get("title", ""), url=url))
    return ScriptedTurn(text=lines["help"])


# -- the specialists ----------------------------------------------------------------------------


def _long_enough(text: str) -> bool:
    """A description says enough (Chinese packs more into fewer characters)."""
    return len(text) >= (MIN_DESCRIPTION_ZH if _CJK_RE.search(text) else MIN_DESCRIPTION)


def critique(details: Mapping[str, Any], lines: Mapping[str, str] = LINES["en"]) -> dict[str, Any]:
    missing = [
        field
        for field, present in (
            ("title", bool(details.get("title"))),
            ("description", _long_enough(str(details.get("description") or ""))),
            ("due_date", bool(details.get("due_date"))),
        )
        if not present
    ]
    if not missing:
        return {"status": "complete", "feedback": lines["complete"]}
    return {
        "status": "incomplete",
        "feedback": lines["still_needed"].format(fields=", ".join(missing)),
        "missing": missing,
    }


def _first(text: str, table: Sequence[tuple[tuple[str, ...], str]], default: str) -> str:
    lowered = text.lower()
    for words, label in table:
        if any(word in lowered for word in words):
            return label
    return default


def classify(
    details: Mapping[str, Any],
    request: str,
    previous: Mapping[str, Any] | None,
    lines: Mapping[str, str] = LINES["en"],
) -> dict[str, Any]:
    text = f"{details.get('title', '')} {details.get('description', '')}"
    result = dict(previous or {}) if CORRECTION_PREFIX.lower() in request.lower() else {}
    if not result:
        lowered = text.lower()
        result = {
            "task_type": _first(text, _TYPES, "Feature"),
            "priority": "urgent" if "urgent" in lowered or "asap" in lowered else "medium",
            "area": _first(text, _AREAS, "Operations"),
        }
        result["reasons"] = lines["reasons"].format(
            task_type=result["task_type"].lower(), area=result["area"], priority=result["priority"]
        )
    corrections: dict[str, str] = {}
    if zh := _PRIORITY_ZH_RE.search(request):
        corrections["priority"] = _PRIORITY_ZH[zh.group(1)]
    for field, pattern in _CORRECTION_RE.items():
        if match := pattern.search(request):
            value = match.group(1).strip()
            corrections[field] = value.lower() if field == "priority" else value.title()
    result.update(corrections)
    corrected = [
        lines["corrected"].format(field=field.replace("_", " "), value=value)
        for field, value in corrections.items()
    ]
    if corrected:
        result["reasons"] = "; ".join(corrected) + "."
    return result


def review(details: Mapping[str, Any], classification: Mapping[str, Any]) -> dict[str, Any]:
    notes = []
    if len(str(details.get("description") or "")) < 30:
        notes.append("the description is short: add how you will know it is done")
    if classification.get("priority") in ("high", "urgent") and not details.get("due_date"):
        notes.append("a high priority needs a due date")
    if notes:
        return {"verdict": "concerns", "notes": "; ".join(notes).capitalize() + "."}
    return {"verdict": "sound", "notes": "Clear scope; the priority fits the due date."}


def plan_taskflow_turn(llm_request: LlmRequest) -> ScriptedTurn | None:
    """The taskflow script's answer, or None when the request is not for a taskflow agent."""
    instruction = instruction_text(llm_request.config)
    role_match = _ROLE_RE.search(instruction)
    if role_match is None:
        return None
    role = role_match.group(1)
    state = _state(instruction)
    details = state.get(state_keys.DETAILS) or {}
    if role == prompts.CRITIC:
        answer: dict[str, Any] = critique(details, _lines(state))
    elif role == prompts.CLASSIFIER:
        request = _last_user_text(llm_request.contents)
        previous = state.get(state_keys.CLASSIFICATION)
        answer = classify(details, request, previous, _lines(state))
    elif role == prompts.EXPERT:
        answer = review(details, state.get(state_keys.CLASSIFICATION) or {})
    else:
        return plan_orchestrator(llm_request, state)
    return ScriptedTurn(text=json.dumps(answer, ensure_ascii=False))

"""Deterministic answers to the post-turn extractor prompts (confidant/jobs/prompts.py).

The offline model hands a request here when its system instruction starts with the extractor
marker, so the whole job pipeline runs with no key: moods from cue words, a summary from the
messages, facts from "I am / I have / my …" statements (and 我是 / 我有 / 我的).
"""

from __future__ import annotations

import json
import re

from confidant.jobs import prompts

_TASK_RE = re.compile(rf"^{prompts.EXTRACTOR_MARKER}:\s*(\w+)\s*$", re.MULTILINE)
_SECTION_MARKERS = (
    prompts.PREVIOUS_MOOD,
    prompts.USER_MESSAGE,
    prompts.ASSISTANT_REPLY,
    prompts.PREVIOUS_SUMMARY,
    prompts.NEW_EVENTS,
    prompts.EXISTING_MEMORIES,
)
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_CLAUSE_RE = re.compile(r"[^.!?。！？\n,;，；]+?(?=\band\b|\bbut\b|[.!?。！？\n,;，；]|但|$)")
_OTHER_PERSON_RE = re.compile(
    r"\b(he|she|they|his|her|partner|wife|husband|mother|mom|father|dad|brother|sister|son"
    r"|daughter|boss|friend)\b|他|她|妈|爸|老板|朋友"
)

# Cue word → (mood, valence). Checked in order; the first cue in the message is the mood.
MOOD_CUES: tuple[tuple[str, str, int], ...] = (
    ("stuck", "stuck", -1),
    ("afraid", "afraid", -2),
    ("scared", "afraid", -2),
    ("anxious", "anxious", -2),
    ("worried", "anxious", -1),
    ("tired", "tired", -1),
    ("sad", "sad", -2),
    ("angry", "angry", -2),
    ("frustrat", "frustrated", -1),
    ("lonely", "lonely", -2),
    ("calm", "calm", 1),
    ("hope", "hopeful", 1),
    ("better", "relieved", 1),
    ("relie", "relieved", 1),
    ("happy", "happy", 2),
    ("glad", "happy", 2),
    ("卡住", "stuck", -1),
    ("害怕", "afraid", -2),
    ("焦虑", "anxious", -2),
    ("担心", "anxious", -1),
    ("累", "tired", -1),
    ("难过", "sad", -2),
    ("生气", "angry", -2),
    ("孤独", "lonely", -2),
    ("平静", "calm", 1),
    ("希望", "hopeful", 1),
    ("轻松", "relieved", 1),
    ("开心", "happy", 2),
)
_VALENCE = {mood: valence for _, mood, valence in MOOD_CUES} | {"neutral": 0}
_FACT_RE = re.compile(r"^\s*(i am|i'm|i have|i've|my)\b", re.IGNORECASE)
_ZH_FACT_RE = re.compile(r"(我是|我有|我的)[^，,。！？!?]*")
_MEMORY_LINE_RE = re.compile(r"^- \[([^\]]+)\] (.*)$")
MAX_SUMMARY_SENTENCES = 5


def extractor_task(instruction: str) -> str | None:
    match = _TASK_RE.search(instruction)
    return match.group(1) if match else None


def sections(text: str) -> dict[str, str]:
    """The request's `MARKER:` sections; a section that says (none) is empty."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.strip() in _SECTION_MARKERS:
            current = found.setdefault(line.strip(), [])
        elif current is not None:
            current.append(line)
    return {
        marker: "" if "\n".join(lines).strip() == prompts.NONE else "\n".join(lines).strip()
        for marker, lines in found.items()
    }


def answer(instruction: str, request_text: str) -> str | None:
    """The JSON answer to an extractor request, or None when it is not one."""
    task = extractor_task(instruction)
    if task is None:
        return None
    parts = sections(request_text)
    if task == prompts.EMOTION_TASK:
        return json.dumps(emotion(parts), ensure_ascii=False)
    if task == prompts.SUMMARY_TASK:
        return json.dumps({"summary": summary(parts)}, ensure_ascii=False)
    if task == prompts.MEMORY_TASK:
        return json.dumps({"operations": memory_operations(parts)}, ensure_ascii=False)
    return None


def _moods(text: str) -> list[str]:
    lowered = text.lower()
    hits = sorted(
        ((lowered.find(cue), mood) for cue, mood, _ in MOOD_CUES if cue in lowered),
        key=lambda hit: hit[0],
    )
    return list(dict.fromkeys(mood for _, mood in hits))


def _about_other_person(clause: str) -> bool:
    lowered = clause.lower()
    about_self = re.match(r"\s*(?:(?:and|but)\s+)?(?:i|i'm)\b|\s*我", lowered)
    return bool(_OTHER_PERSON_RE.search(lowered)) and not about_self


def emotion(parts: dict[str, str]) -> dict[str, object]:
    """The user's mood from clauses about themselves; another person's from clauses about them."""
    message = parts.get(prompts.USER_MESSAGE, "")
    clauses = [c for c in _CLAUSE_RE.findall(message) if c.strip()] or [message]
    other = [m for c in clauses if _about_other_person(c) for m in _moods(c)]
    own = [m for c in clauses if not _about_other_person(c) for m in _moods(c)]
    moods = _moods(message)
    user_mood = own[0] if own else "neutral"
    previous = parts.get(prompts.PREVIOUS_MOOD, "").strip().lower()
    if previous in _VALENCE:
        delta = _VALENCE[user_mood] - _VALENCE[previous]
        trend = "improving" if delta > 0 else "worsening" if delta < 0 else "steady"
    else:
        trend = "steady"
    return {
        "user_mood": user_mood,
        "other_mood": other[0] if other else None,
        "trend": trend,
        "tags": moods[:5],
    }


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.findall(text) if s.strip()]


def summary(parts: dict[str, str]) -> str:
    """The previous summary's sentences plus one per new user message; the last five kept."""
    kept = _sentences(parts.get(prompts.PREVIOUS_SUMMARY, ""))
    replies: list[str] = []
    for line in parts.get(prompts.NEW_EVENTS, "").splitlines():
        who, _, text = line.partition(": ")
        said = " ".join(text.split())
        if not said:
            continue
        if who == "user":
            first = _sentences(said)[0].rstrip(".!?。！？") if _sentences(said) else said
            kept.append(f'The user said "{first[:160]}".')
        else:
            replies.append(said)
    if len(kept) < 2 and replies:
        first = _sentences(replies[-1])[0] if _sentences(replies[-1]) else replies[-1]
        kept.append(f'The coach replied "{first[:160].rstrip(".!?。！？")}".')
    if len(kept) < 2:
        kept.append("The conversation has just begun.")
    return " ".join(kept[-MAX_SUMMARY_SENTENCES:])


def facts(message: str) -> list[str]:
    found = [s.rstrip(".!?") for s in _sentences(message) if _FACT_RE.match(s)]
    found += [m.group(0) for m in _ZH_FACT_RE.finditer(message)]
    return list(
        dict.fromkeys(" ".join(f.split()) for f in found if len(f.split()) > 1 or not f.isascii())
    )


def subject(fact: str) -> str:
    """What a fact is about: its first three words (English) or four characters (Chinese)."""
    if fact.isascii():
        words = fact.lower().replace("i'm", "i am").replace("i've", "i have").split()
        return " ".join(words[:3])
    return fact[:4]


def memory_operations(parts: dict[str, str]) -> list[dict[str, object]]:
    existing: dict[str, str] = {}
    for line in parts.get(prompts.EXISTING_MEMORIES, "").splitlines():
        match = _MEMORY_LINE_RE.match(line.strip())
        if match:
            existing[match.group(1)] = match.group(2)
    operations: list[dict[str, object]] = []
    for fact in facts(parts.get(prompts.USER_MESSAGE, "")):
        same = [mid for mid, text in existing.items() if subject(text) == subject(fact)]
        if any(existing[mid].casefold() == fact.casefold() for mid in same):
            continue  # already known
        if same:
            operations.append({"op": "update", "id": same[0], "text": fact})
        else:
            operations.append({"op": "add", "id": None, "text": fact})
    return operations

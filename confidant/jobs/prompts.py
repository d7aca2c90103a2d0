"""Prompts of the post-turn extractors (emotion, summary, memory).

Every extractor's system instruction starts with the line `CONFIDANT_EXTRACTOR: <task>`; the
offline model recognises it and answers deterministically (agents/offline/extractors.py). The
request text is made of `SECTION:` blocks (marker lines below) so both a real model and the
offline one read the same structure.
"""

from __future__ import annotations

EXTRACTOR_MARKER = "CONFIDANT_EXTRACTOR"
EMOTION_TASK = "emotion"
SUMMARY_TASK = "summary"
MEMORY_TASK = "memory"

# Section markers of the request text (one per line, the content follows on the next lines).
PREVIOUS_MOOD = "PREVIOUS_MOOD:"
USER_MESSAGE = "USER_MESSAGE:"
ASSISTANT_REPLY = "ASSISTANT_REPLY:"
PREVIOUS_SUMMARY = "PREVIOUS_SUMMARY:"
NEW_EVENTS = "NEW_EVENTS:"
EXISTING_MEMORIES = "EXISTING_MEMORIES:"
NONE = "(none)"

JSON_ONLY = "Answer with one JSON object and nothing else (no code fences, no prose)."

EMOTION_INSTRUCTION = f"""\
You read one exchange of a coaching conversation and describe its emotional tone.
Return {{"user_mood": str, "other_mood": str | null, "trend": "improving" | "steady" |
"worsening", "tags": [str]}}: user_mood is one or two words for how the user feels;
other_mood is the mood of another person the user talks about, or null; trend compares
user_mood with {PREVIOUS_MOOD} (steady when there is none); tags are up to five lowercase
emotion words. {JSON_ONLY}"""

SUMMARY_INSTRUCTION = f"""\
You keep a rolling summary of a coaching conversation. Given {PREVIOUS_SUMMARY} and the
{NEW_EVENTS} since it, write the new summary: 2 to 5 sentences in the conversation's language,
in the third person, keeping what matters for continuing the conversation (the user's concern,
insights, commitments) and dropping small talk. Return {{"summary": str}}. {JSON_ONLY}"""

MEMORY_INSTRUCTION = f"""\
You maintain long-term memories about a user: durable facts (who they are, what they have,
their circumstances, preferences and goals), never passing moods or the assistant's words.
Read {USER_MESSAGE} and compare the facts it states with {EXISTING_MEMORIES}
(each "- [id] text"). Return {{"operations": [{{"op": "add" | "update" | "delete",
"id": str | null, "text": str | null}}]}}: "add" a new fact (text, no id); "update" an
existing memory the message changes (its id, the new text); "delete" an existing memory the
message contradicts or retracts (its id). Facts are short sentences in the user's language,
in the first person as the user said them. Return an empty list when the message states no
durable fact. {JSON_ONLY}"""


def system_instruction(task: str, instruction: str) -> str:
    return f"{EXTRACTOR_MARKER}: {task}\n{instruction}"


def section(marker: str, body: str) -> str:
    return f"{marker}\n{body.strip() or NONE}"

"""Small pure pieces of taskflow: answers read as yes/no, details read from text, the critic."""

from __future__ import annotations

import pytest

from agents.offline.taskflow_model import classify, critique, extract_details
from agents.taskflow.human_loop import read_yes_no
from agents.taskflow.progress import taskflow_progress


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", True),
        ("Approve", True),
        ("looks good to me", True),
        ("确认", True),
        ("no, not now", False),
        ("cancel it", False),
        ("取消", False),
        ("priority should be high", None),
    ],
)
def test_read_yes_no(text: str, expected: bool | None) -> None:
    assert read_yes_no(text) is expected


def test_extract_details_reads_title_iso_date_words_date_description_and_tags() -> None:
    found = extract_details("Add a task: call the bank, due friday. It's about the loan #money")
    assert found == {
        "title": "call the bank",
        "due_date": "friday",
        "description": "the loan #money",
        "tags": ["money"],
    }
    answered = extract_details("2026-11-27 the loan must be renegotiated", answering=True)
    assert answered == {"due_date": "2026-11-27", "description": "the loan must be renegotiated"}


def test_critic_lists_what_is_missing() -> None:
    assert critique({"title": "x"})["missing"] == ["description", "due_date"]
    done = critique({"title": "x", "description": "a long enough one", "due_date": "2026-01-01"})
    assert done["status"] == "complete"


def test_classifier_applies_corrections_to_the_previous_proposal() -> None:
    details = {"title": "fix the login bug", "description": "users cannot log in"}
    first = classify(details, "{}", None)
    assert (first["task_type"], first["area"], first["priority"]) == (
        "Bug",
        "Engineering",
        "medium",
    )
    corrected = classify(details, "Correction from the user: priority urgent, area Security", first)
    assert (corrected["priority"], corrected["area"], corrected["task_type"]) == (
        "urgent",
        "Security",
        "Bug",
    )


def test_progress_maps_steps() -> None:
    assert taskflow_progress({"taskflow_step": "classify"}) == {
        "protocol_id": "taskflow",
        "step": 2,
        "total_steps": 4,
        "phase": "classify",
        "progress": 0.25,
        "step_name": "Classify",
    }
    assert taskflow_progress({"taskflow_step": "done"})["progress"] == 1.0  # type: ignore[index]
    assert taskflow_progress({"taskflow_step": "review"}) is None  # off the run's spine
    assert taskflow_progress({"other": 1}) is None

"""The protocol engine: start, schema-checked steps, completion and report, pause, timeout."""

from __future__ import annotations

from agents.protocols.engine import Status
from tests.unit.protocols.support import Clock, turn

WEEKLY = [
    {"wins": ["shipped"]},
    {"lessons": "ask earlier"},
    {"focus": ["health", "launch"]},
    {"first_step": "Monday 8am run"},
]


async def test_a_protocol_runs_step_by_step_to_a_stored_report() -> None:
    t = turn()
    started = await t.call("start_protocol", protocol_id="weekly_review")
    assert started["current_step"]["number"] == 1
    assert t.context.state["protocol_progress"] == {
        "protocol_id": "weekly_review",
        "step": 1,
        "total_steps": 4,
        "phase": "look_back",
        "progress": 0.0,
        "step_name": "Wins",
    }
    for number, data in enumerate(WEEKLY, start=1):
        result = await t.call(
            "advance_protocol_step", step_data=data, step_summary=f"summary {number}"
        )
        assert result["status"] == "ok", result
    assert result["result"] == "completed"
    assert result["summary"] == "summary 1 summary 2 summary 3 summary 4"
    assert t.context.state["protocol_progress"]["phase"] == "completed"
    assert t.context.state["protocol_progress"]["progress"] == 1.0
    skill = t.draft.skill("lifecoach")
    assert skill["protocol"]["completed"] is True
    assert skill["protocol"]["data"]["step_3"] == {"focus": ["health", "launch"]}
    assert skill["current"] == {"focus": ["health", "launch"]}  # save_to: the result stays
    report = skill["reports"]["weekly_review"]["markdown"]
    assert report.startswith("# Weekly review") and "Monday 8am run" in report
    [(name, card)] = t.data_parts.drain()
    assert name == "protocol-completed" and card["protocol_id"] == "weekly_review"
    assert card["report_url"] == "/v1/me/reports/lifecoach/weekly_review"


async def test_step_data_is_checked_against_the_steps_schema() -> None:
    t = turn()
    await t.call("start_protocol", protocol_id="dankoe")
    bad = await t.call(
        "advance_protocol_step", step_data={"pain_points": "not a list"}, step_summary="x"
    )
    assert bad["error"]["code"] == "invalid_step_data"
    assert bad["error"]["problems"][0]["path"] == "pain_points"
    assert bad["error"]["schema"]["required"] == ["pain_points"]
    missing = await t.call("advance_protocol_step", step_data={}, step_summary="x")
    assert "pain_points" in missing["error"]["problems"][0]["message"]
    assert t.runner.state()["step"] == 1


async def test_starting_another_protocol_pauses_the_first_and_starting_it_again_resumes() -> None:
    t = turn()
    await t.call("start_protocol", protocol_id="dankoe")
    await t.call(
        "advance_protocol_step", step_data={"pain_points": ["dull job"]}, step_summary="dull job"
    )
    switched = await t.call("start_protocol", protocol_id="weekly_review")
    assert switched["paused"] == "dankoe" and switched["resumed"] is False
    assert t.runner.paused()["dankoe"]["step"] == 2
    back = await t.call("start_protocol", protocol_id="dankoe")
    assert back["resumed"] is True and back["current_step"]["number"] == 2
    assert set(t.runner.paused()) == {"weekly_review"}
    assert "PAUSED_PROTOCOLS: weekly_review" in t.runner.prompt()


async def test_after_the_timeout_the_protocol_waits_for_the_users_confirmation() -> None:
    clock = Clock()
    t = turn(clock=clock, timeout_s=3600)
    await t.call("start_protocol", protocol_id="dankoe")
    clock.now += 3601
    assert t.runner.status() is Status.AWAITING_CONFIRMATION
    assert "PROTOCOL_STATUS: awaiting_confirmation" in t.runner.prompt()
    refused = await t.call(
        "advance_protocol_step", step_data={"pain_points": ["x"]}, step_summary="x"
    )
    assert refused["error"]["code"] == "confirmation_needed"
    resumed = await t.call("resume_protocol")
    assert resumed["result"] == "resumed" and t.runner.status() is Status.ACTIVE


async def test_cancel_clears_the_active_protocol() -> None:
    t = turn()
    await t.call("start_protocol", protocol_id="dankoe")
    cancelled = await t.call("cancel_protocol", reason="not today")
    assert cancelled["progress"]["phase"] == "cancelled"
    assert t.runner.status() is Status.NONE
    again = await t.call("cancel_protocol")
    assert again["error"]["code"] == "no_active_protocol"


async def test_the_invitation_is_a_card_built_from_the_protocol_file() -> None:
    t = turn()
    result = await t.call("show_protocol_invitation", protocol_id="dankoe", reason="fits")
    [(name, card)] = t.data_parts.drain()
    assert name == "protocol-invitation"
    assert card["title"] == "One-day life reset" and card["total_steps"] == 6
    assert [a["value"] for a in card["actions"]] == ["start", "later"]
    assert result["invitation"] == card
    unknown = await t.call("show_protocol_invitation", protocol_id="nope")
    assert unknown["error"]["available"] == ["dankoe", "weekly_review"]


def test_a_protocol_in_use_is_touched_at_most_once_per_quarter_timeout() -> None:
    clock = Clock()
    t = turn(clock=clock, timeout_s=400)
    t.runner.start("dankoe")
    writes = len(t.draft.ops)
    assert t.runner.touch() is False
    clock.now += 150
    assert t.runner.touch() is True and len(t.draft.ops) > writes

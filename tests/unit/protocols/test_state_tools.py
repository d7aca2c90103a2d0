"""read_state / write_state / append_to_list on a turn's profile draft."""

from __future__ import annotations

from tests.unit.protocols.support import turn


async def test_write_state_deep_merges_into_the_requests_skill_only() -> None:
    t = turn({"skills": {"lifecoach": {"goals": {"year": "run", "list": [1, 2]}}}})
    result = await t.call("write_state", section="goals", data={"month": "5k", "list": [3]})
    assert result["status"] == "ok"
    assert t.draft.skill("lifecoach")["goals"] == {"year": "run", "month": "5k", "list": [3]}
    assert t.draft.skill("career") == {}
    removed = await t.call("write_state", section="goals", data={"year": None})
    assert removed["data"] == {"month": "5k", "list": [3]}


async def test_the_skill_comes_from_the_request_never_from_arguments() -> None:
    t = turn(skill="career")
    result = await t.call("write_state", section="resume", data={"x": 1}, skill_id="lifecoach")
    assert result["skill_id"] == "career"
    assert t.draft.skill("lifecoach") == {} and t.draft.skill("career")["resume"] == {"x": 1}


async def test_append_to_list_is_newest_first_bounded_and_timestamped() -> None:
    t = turn()
    for n in range(4):
        result = await t.call(
            "append_to_list", path="progress.milestones", entry={"n": n}, max_items=3
        )
    assert result["count"] == 3
    milestones = t.draft.skill("lifecoach")["progress"]["milestones"]
    assert [m["n"] for m in milestones] == [3, 2, 1]
    assert all("_created_at" in m for m in milestones)


async def test_read_state_returns_sections_and_hides_the_protocol_engines_parts() -> None:
    t = turn({"skills": {"lifecoach": {"goals": {"a": 1}, "journal": [], "protocol": {"id": "x"}}}})
    everything = await t.call("read_state")
    assert set(everything["data"]) == {"goals", "journal"}
    some = await t.call("read_state", sections=["goals"])
    assert some["data"] == {"goals": {"a": 1}}
    assert (await turn().call("read_state"))["status"] == "empty"


async def test_bad_arguments_come_back_as_errors_the_model_can_act_on() -> None:
    t = turn({"skills": {"lifecoach": {"goals": {"a": 1}}}})
    cases = [
        ("write_state", {"section": "../career", "data": {"x": 1}}, "invalid_path"),
        ("write_state", {"section": "_meta", "data": {"x": 1}}, "invalid_path"),
        ("write_state", {"section": "protocol", "data": {"x": 1}}, "reserved_section"),
        ("write_state", {"section": "goals", "data": "text"}, "invalid_data"),
        ("write_state", {"section": "goals", "data": {"x": "y" * 20_000}}, "too_large"),
        ("append_to_list", {"path": "goals", "entry": {"a": 1}}, "not_a_list"),
        (
            "append_to_list",
            {"path": "journal", "entry": {"a": 1}, "max_items": 0},
            "invalid_max_items",
        ),
        ("append_to_list", {"path": "journal", "entry": []}, "invalid_entry"),
        ("read_state", {"sections": "goals"}, "invalid_sections"),
    ]
    for name, args, code in cases:
        result = await t.call(name, **args)
        assert result["status"] == "error", (name, args)
        assert result["error"]["code"] == code, (name, args, result)
    assert t.draft.ops == []  # nothing was buffered

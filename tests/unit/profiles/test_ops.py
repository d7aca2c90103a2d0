"""The profile's write rules: deep merge, newest-first appends, the units a write touches."""

from __future__ import annotations

import pytest

from confidant.profiles import AppendOp, MergeOp, ProfileDraft, SetOp, apply_ops
from confidant.profiles.ops import deep_merge, touched_units
from confidant.profiles.rules import MAX_SKILL_BYTES, ProfileRuleError


def test_nested_maps_merge_lists_replace_and_null_deletes() -> None:
    stored = {"a": {"x": 1, "y": {"deep": 1, "keep": 2}}, "tags": [1, 2, 3], "gone": "soon"}
    merged = deep_merge(stored, {"a": {"y": {"deep": 9}, "z": 3}, "tags": [4], "gone": None})
    assert merged == {"a": {"x": 1, "y": {"deep": 9, "keep": 2}, "z": 3}, "tags": [4]}
    assert stored["a"]["y"]["deep"] == 1  # the input is not changed


def test_appends_put_the_newest_first_and_drop_the_oldest() -> None:
    profile: dict = {}
    for n in range(5):
        profile = apply_ops(profile, [AppendOp(("skills", "s", "journal"), {"n": n}, 3)])
    assert [e["n"] for e in profile["skills"]["s"]["journal"]] == [4, 3, 2]


def test_an_append_to_a_missing_path_creates_the_maps_and_the_list() -> None:
    profile = apply_ops({}, [AppendOp(("skills", "s", "progress", "milestones"), {"m": 1}, 10)])
    assert profile == {"skills": {"s": {"progress": {"milestones": [{"m": 1}]}}}}


def test_set_none_deletes_and_ops_apply_in_order() -> None:
    ops = [
        MergeOp(("skills", "s", "goals"), {"a": 1}),
        SetOp(("skills", "s", "goals", "a"), None),
        MergeOp(("preferences",), {"language": "zh"}),
    ]
    assert apply_ops({}, ops) == {"skills": {"s": {"goals": {}}}, "preferences": {"language": "zh"}}


def test_writes_touch_one_skill_section_or_one_top_level_section() -> None:
    ops = [
        MergeOp(("skills", "s", "goals", "q1"), {"a": 1}),
        AppendOp(("skills", "s", "journal"), {}, 5),
        MergeOp(("preferences",), {"language": "en"}),
        SetOp(("skills", "s", "goals"), {}),
    ]
    assert touched_units(ops) == [
        ("skills", "s", "goals"),
        ("skills", "s", "journal"),
        ("preferences",),
    ]


def test_a_draft_reads_its_own_writes_and_stamps_the_skill_meta() -> None:
    draft = ProfileDraft({"skills": {"s": {"goals": {"a": 1}}}}, clock=lambda: 0.0)
    draft.write_skill("s", [MergeOp(("goals",), {"b": 2})])
    assert draft.skill("s")["goals"] == {"a": 1, "b": 2}
    assert draft.skill("s")["_meta"]["updated_at"].startswith("1970-01-01")
    assert len(draft.ops) == 2 and dict(draft)["skills"]["s"]["goals"]["b"] == 2


def test_a_write_that_would_overfill_the_skill_is_refused_whole() -> None:
    draft = ProfileDraft({})
    big = "x" * 15_000
    with pytest.raises(ProfileRuleError) as refused:
        for n in range(MAX_SKILL_BYTES // 15_000 + 2):
            draft.write_skill("s", [MergeOp((f"part{n}",), {"text": big})])
    assert refused.value.code == "skill_full"
    assert len(draft.skill("s")) <= MAX_SKILL_BYTES // 15_000 + 1


def test_a_section_stored_in_an_old_shape_reads_as_empty_not_as_an_error() -> None:
    from confidant.profiles import Profile

    profile = Profile.from_stored(
        {"preferences": "zh", "skills": {"lifecoach": {"goals": {}}}, "legacy": 1}
    )
    assert profile.preferences.subscribed_skills == []
    assert profile.skills == {"lifecoach": {"goals": {}}}

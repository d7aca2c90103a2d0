"""Path and value validation of state-tool writes."""

from __future__ import annotations

import pytest

from confidant.profiles.rules import MAX_WRITE_BYTES, ProfileRuleError, check_value, parse_path


@pytest.mark.parametrize("path", ["journal", "progress.milestones", "a_b.c1.d2.e3"])
def test_plain_dotted_paths_are_accepted(path: str) -> None:
    assert parse_path(path) == tuple(path.split("."))


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("", "invalid_path"),
        ("..", "invalid_path"),
        ("../career", "invalid_path"),
        ("journal..x", "invalid_path"),
        ("_meta", "invalid_path"),
        ("goals._meta", "invalid_path"),
        ("skills/career", "invalid_path"),
        ("a.b.c.d.e", "invalid_path"),
        ("protocol", "reserved_section"),
        ("reports.dankoe", "reserved_section"),
        (42, "invalid_path"),
    ],
)
def test_paths_cannot_escape_the_skill_or_reach_reserved_parts(path: object, code: str) -> None:
    with pytest.raises(ProfileRuleError) as refused:
        parse_path(path)
    assert refused.value.code == code
    assert refused.value.to_result()["error"]["field"] == "path"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ({"x": [[1, 2]]}, "nested_list"),
        ({"__name__": 1}, "invalid_key"),
        ({"_meta": {}}, "invalid_key"),
        ({"x": object()}, "invalid_value"),
        ({"x": "y" * MAX_WRITE_BYTES}, "too_large"),
        ({"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": 1}}}}}}}}}}, "too_deep"),
    ],
)
def test_values_must_be_small_json_without_nested_lists(value: object, code: str) -> None:
    with pytest.raises(ProfileRuleError) as refused:
        check_value(value, field="data")
    assert refused.value.code == code


def test_ordinary_values_pass() -> None:
    check_value({"goals": [{"title": "run", "done": False, "n": 1.5}], "note": None}, field="d")

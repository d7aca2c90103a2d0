"""The legacy → unified profile mapping (pure)."""

from __future__ import annotations

from confidant.profiles.migrate import migrate_profile

NOW = "2026-01-20T10:00:00+00:00"
LEGACY = {
    "account": {"display_name": "Li"},
    "skill_data": {"bazi": {"chart": {"day": "jia"}}, "zodiac": {"chart": {"sun": "leo"}}},
    "life_context": {
        "_paths": {
            "lifecoach": {
                "content": {"north_star": {"vision": "calm"}, "journal": [{"t": 1}]},
                "version": 1,
                "updated_at": "2025-12-01T00:00:00+00:00",
            }
        }
    },
    "skills": {"lifecoach": {"journal": [{"t": 2}]}},
}


def test_legacy_paths_move_under_skills_and_new_data_wins() -> None:
    migrated, moves = migrate_profile(LEGACY, NOW)
    assert "skill_data" not in migrated and "life_context" not in migrated
    assert migrated["account"] == {"display_name": "Li"}
    assert migrated["skills"]["bazi"]["chart"] == {"day": "jia"}
    coach = migrated["skills"]["lifecoach"]
    assert coach["north_star"] == {"vision": "calm"}
    assert coach["journal"] == [{"t": 2}]  # the stored new-format list is kept
    assert coach["_meta"]["updated_at"] == "2025-12-01T00:00:00+00:00"
    assert coach["_meta"]["migrated_from"] == ["life_context._paths.lifecoach.content"]
    assert migrated["skills"]["zodiac"]["_meta"]["updated_at"] == NOW
    assert moves == [
        "skill_data.bazi → skills.bazi",
        "skill_data.zodiac → skills.zodiac",
        "life_context._paths.lifecoach.content → skills.lifecoach",
    ]


def test_migrating_twice_changes_nothing() -> None:
    once, _ = migrate_profile(LEGACY, NOW)
    twice, moves = migrate_profile(once, "later")
    assert moves == [] and twice == once


def test_other_life_context_fields_are_kept() -> None:
    migrated, _ = migrate_profile({"life_context": {"_paths": {}, "notes": "x"}}, NOW)
    assert migrated == {"life_context": {"notes": "x"}}

"""Skills are folders: the shipped ones load, a new folder is a new skill, bad ones are refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.lifecoach.agent import SKILLS, SKILLS_DIR
from agents.onemind.progress import onemind_progress
from agents.skills import load_skills


def test_the_shipped_skills_and_protocols_load() -> None:
    assert set(SKILLS) == {"lifecoach", "career"}
    assert set(SKILLS["lifecoach"].loaded_protocols) == {"dankoe", "weekly_review"}
    assert SKILLS["lifecoach"].loaded_protocols["dankoe"].total_steps == 6
    assert "write_state" in SKILLS["career"].tools


def test_a_new_folder_is_a_new_skill(tmp_path: Path) -> None:
    shutil.copytree(SKILLS_DIR, tmp_path, dirs_exist_ok=True)
    folder = tmp_path / "fitness"
    folder.mkdir()
    (folder / "skill.yaml").write_text(
        "id: fitness\ntitle: Fitness\ninstruction: Train well.\ntools: [read_state, write_state]\n"
    )
    assert set(load_skills(tmp_path)) == {"career", "fitness", "lifecoach"}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("id: bad\ntitle: B\ninstruction: x\ntools: [rm_rf]\n", "unknown tools"),
        ("id: other\ntitle: B\ninstruction: x\n", "folder name"),
        ("id: bad\ntitle: B\ninstruction: x\ntools: [read_state]\nprotocols: [p]\n", "p.yaml"),
    ],
)
def test_bad_manifests_are_refused_with_the_reason(
    tmp_path: Path, manifest: str, message: str
) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "skill.yaml").write_text(manifest)
    with pytest.raises(ValueError, match=message):
        load_skills(tmp_path)


def test_a_protocol_step_schema_must_be_a_valid_object_schema(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    (folder / "protocols").mkdir(parents=True)
    tools = (
        "[show_protocol_invitation, start_protocol, advance_protocol_step, cancel_protocol,"
        " resume_protocol]"
    )
    (folder / "skill.yaml").write_text(
        f"id: bad\ntitle: B\ninstruction: x\ntools: {tools}\nprotocols: [p]\n"
    )
    (folder / "protocols" / "p.yaml").write_text(
        "id: p\ntitle: P\ndescription: d\nestimated_time: 1m\nsteps:\n"
        "  - {name: s, goal: g, prompt: p, question: q, schema: {type: nonsense}}\n"
    )
    with pytest.raises(ValueError, match="invalid protocol file"):
        load_skills(tmp_path)


def test_onemind_reports_its_stages_in_the_shared_vocabulary() -> None:
    assert onemind_progress({"current_stage": "stage_3_micro_action"}) == {
        "protocol_id": "onemind",
        "step": 3,
        "total_steps": 4,
        "phase": "stage_3_micro_action",
        "progress": 0.5,
        "step_name": "Micro-action",
    }
    assert onemind_progress({"other": 1}) is None

"""Session state keys of the onemind app (values persisted with the session)."""

from __future__ import annotations

from agents.safety import LOCALE_STATE_KEY

# Stage id of the four-stage protocol; absent means stage 1. Written only by `advance_stage`.
CURRENT_STAGE = "current_stage"
# dict[stage id, summary]: what each finished stage produced, carried into the crystal.
STAGE_NOTES = "stage_notes"
# "zh" / "en": the conversation language (same key the crisis guard reads).
LOCALE = LOCALE_STATE_KEY
# list[str]: ids of the integration crystals saved in this session (at most one today).
CRYSTAL_IDS = "crystal_ids"
# str: name of the crystal saved in this session, so the coach can refer back to it.
CRYSTAL_NAME = "crystal_name"

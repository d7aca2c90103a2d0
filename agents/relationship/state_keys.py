"""Session-state keys and turn-context keys of the relationship app."""

from __future__ import annotations

# The first pipeline step's full output, for the second step's instruction. `temp:` keys live
# for the invocation only: the reply itself is already stored as the first step's event.
PIPELINE_OUTPUT = "temp:relationship_pipeline_output"

# TurnContext.loaded key of the turn's route (set by the before-run hook).
ROUTE = "relationship_route"

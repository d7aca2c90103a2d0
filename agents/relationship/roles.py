"""The relationship engine's agents, modes and strategy endpoints, by name."""

from __future__ import annotations

ROUTER = "router"
ORCHESTRATOR = "orchestrator"
PROFILE = "profile"
ANALYZER = "analyzer"
STRATEGIST = "strategist"
WRITER = "writer"
EXTRACTOR = "extractor"  # the profile-proposal extractor (a post-turn job)

SPECIALISTS: tuple[str, ...] = (PROFILE, ANALYZER, STRATEGIST, WRITER)
SPECIALIST_DESCRIPTIONS: dict[str, str] = {
    PROFILE: "Person profiling: personality, attachment and conflict style, needs, dynamics.",
    ANALYZER: "Behavioural decoding: real intent, emotions, power dynamics, subtext.",
    STRATEGIST: "Strategy: goal, phased plan with IF/THEN branches, risks, success signals.",
    WRITER: "Wording: three ready-to-send message variants in the user's style.",
}

# Router modes.
RUNNER = "runner"
PIPE_ANALYZE_STRATEGIST = "pipe_analyze_strategist"
PIPE_STRATEGIST_WRITER = "pipe_strategist_writer"
ROUTER_MODES: tuple[str, ...] = (RUNNER, PIPE_ANALYZE_STRATEGIST, PIPE_STRATEGIST_WRITER)
PIPELINES: dict[str, tuple[str, str]] = {
    PIPE_ANALYZE_STRATEGIST: (ANALYZER, STRATEGIST),
    PIPE_STRATEGIST_WRITER: (STRATEGIST, WRITER),
}
# A turn without the router: one specialist answers (the strategy endpoints).
DIRECT = "direct"

# Strategy endpoints (`mode` option) → the one specialist that answers.
STRATEGY_MODES: dict[str, str] = {"analyze": ANALYZER, "advise": STRATEGIST, "script": WRITER}

"""Side effects exactly once: an idempotency ledger written before every external call."""

from confidant.effects.ledger import (
    EffectLedger,
    EffectRecord,
    EffectState,
    perform_once,
)

__all__ = ["EffectLedger", "EffectRecord", "EffectState", "perform_once"]

"""Quoted words: where a message's view holds what its quotation marks enclose.

Normalisation drops quotation marks, and with them who said what: "我老婆说“你们没有我会更好”" reads
"我老婆说你们没有我会更好". The quoted parts are found in the message as sent and then in its view:
each part between quotes and each quoted part is normalised alone and looked for after the one
before it. A part not found (normalisation joined it with its neighbour) is left out: its words
count as the speaker's, so an unsure reading fires.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.safety.normalise import normalise

# Double quotes and CJK corner brackets; single quotes are apostrophes too often ("don't").
_OPENERS = '“「『"'
_QUOTED = re.compile(
    r"“([^“”]{1,500})”|「([^「」]{1,500})」|『([^『』]{1,500})』|\"([^\"]{1,500})\""
)


@dataclass
class Quotes:
    """The quoted spans of a message's view, found when first asked for."""

    text: str  # the message as sent
    view: str  # its view
    _spans: list[tuple[int, int]] | None = field(default=None, repr=False)

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The view's quoted spans (start, end), in order."""
        if self._spans is None:
            self._spans = _quoted_spans(self.text, self.view)
        return self._spans


def _quoted_spans(text: str, view: str) -> list[tuple[int, int]]:
    if not any(opener in text for opener in _OPENERS):
        return []
    spans: list[tuple[int, int]] = []
    cursor = 0  # where the view is read from: after what was found last
    last = 0  # where the message is read from
    for found in _QUOTED.finditer(text):
        between = normalise(text[last : found.start()])
        last = found.end()
        if between and (at := view.find(between, cursor)) != -1:
            cursor = at + len(between)
        quoted = normalise(found.group(found.lastindex or 0))
        if quoted and (at := view.find(quoted, cursor)) != -1:
            spans.append((at, at + len(quoted)))
            cursor = at + len(quoted)
    return spans

"""Quoted words: where a message's view holds what its quotation marks enclose.

Normalisation drops quotation marks, and with them who said what: "我老婆说“你们没有我会更好”" reads
"我老婆说你们没有我会更好". The message is normalised once more with a marker word where each mark
was; the parts between markers, quoted or not, are then looked for in the view in turn, each
after the one before. A part not found (normalisation joined it with its neighbour) is left out:
its words count as the speaker's, so an unsure reading fires.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from agents.safety.normalise import CLAUSE_MARK, normalise

# Double quotes and CJK corner brackets; single quotes are apostrophes too often ("don't").
_OPENERS = '“「『"'
# A word no normalisation step changes (too short to be glued words, no digits, no repeats).
_MARKER = "zqxjz"
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

    def ending(self, position: int) -> int | None:
        """The index of the quoted span that `position` ends inside (start < position <= end)."""
        spans = self.spans
        index = bisect.bisect_left(spans, position, key=lambda span: span[1])
        return index if index < len(spans) and spans[index][0] < position else None


def _quoted_spans(text: str, view: str) -> list[tuple[int, int]]:
    if not any(opener in text for opener in _OPENERS):
        return []
    marked, count = _QUOTED.subn(
        lambda found: f" {_MARKER} {found.group(found.lastindex or 0)} {_MARKER} ", text
    )
    parts = normalise(marked).split(_MARKER)
    if len(parts) != 2 * count + 1:  # the message had the marker word itself
        return []
    spans: list[tuple[int, int]] = []
    cursor = 0  # where the view is read from: after what was found last
    for index, part in enumerate(parts):
        part = part.strip(" " + CLAUSE_MARK)
        if part and (at := view.find(part, cursor)) != -1:
            if index % 2:  # a quoted part
                spans.append((at, at + len(part)))
            cursor = at + len(part)
    return spans

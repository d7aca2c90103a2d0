"""A progress bar on stderr for long work (only on a terminal: pipes and logs stay clean)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from confidant.cli.render import bar


@dataclass
class Progress:
    total: int
    label: str
    stream: TextIO = sys.stderr
    done: int = 0

    @property
    def visible(self) -> bool:
        return self.stream.isatty()

    def advance(self, step: int = 1) -> None:
        self.done += step
        if self.visible:
            shown = bar(self.done, self.total)
            self.stream.write(f"\r{self.label} {shown} {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.visible:
            self.stream.write("\n")
            self.stream.flush()

"""Generated sections of a Markdown file (docs/performance.md), each between its markers."""

from __future__ import annotations

import re
from pathlib import Path


def rewrite_section(path: Path, name: str, text: str) -> None:
    """Replace what lies between `<!-- {name}:begin -->` and `<!-- {name}:end -->`, or append the
    section when the file has none."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    existing = path.read_text() if path.exists() else ""
    section = f"{begin}\n{text}\n{end}"
    if begin in existing:
        pattern = re.escape(begin) + ".*?" + re.escape(end)
        updated = re.sub(pattern, lambda _: section, existing, flags=re.S)
    else:
        updated = existing.rstrip() + "\n\n" + section + "\n"
    path.write_text(updated)

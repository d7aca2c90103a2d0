"""Read infra/ as data: every .tf file parsed by python-hcl2 (nothing is planned or applied).

python-hcl2 keeps string literals quoted (`"\"x\""`), turns expressions into `"${...}"`, marks
blocks with `__is_block__` and keeps comments under `__comments__`; the helpers here hide that.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import hcl2

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
MODULE = INFRA / "modules" / "confidant"
ENVS = {path.name: path for path in sorted((INFRA / "envs").iterdir()) if path.is_dir()}
BOOTSTRAP = INFRA / "bootstrap"
ROOTS = [*ENVS.values(), BOOTSTRAP]
DIRECTORIES = [MODULE, *ROOTS]

_LITERAL = re.compile(r'^"((?:[^"\\$]|\\.|\$(?!\{))*)"$')


def tf_files(directory: Path = INFRA) -> list[Path]:
    return sorted(p for p in directory.rglob("*.tf") if ".terraform" not in p.parts)


@cache
def parse(path: Path) -> dict[str, Any]:
    return hcl2.loads(path.read_text())


def name(label: str) -> str:
    """A block label without python-hcl2's quotes."""
    return label.strip('"')


def literal(value: Any) -> Any:
    """The Python value of a literal (`"\"x\""` → "x", 3 → 3); None for an expression."""
    if isinstance(value, str):
        if value.startswith("${"):
            return None
        match = _LITERAL.match(value)
        return match.group(1).replace('\\"', '"') if match else None
    return value


def plain(value: Any) -> Any:
    """`value` with every literal unquoted, recursively (expressions stay `${...}` strings)."""
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not is_meta(k)}
    unquoted = literal(value)
    return value if unquoted is None else unquoted


def is_meta(key: str) -> bool:
    return key.startswith("__")


@dataclass(frozen=True)
class Block:
    kind: str  # resource, data, variable, output, module, locals, provider, terraform
    labels: tuple[str, ...]
    body: dict[str, Any]
    path: Path

    @property
    def address(self) -> str:
        return ".".join((self.kind, *self.labels))


def blocks(directory: Path, kind: str | None = None) -> Iterator[Block]:
    """Top-level blocks of the .tf files directly in `directory`."""
    for path in sorted(directory.glob("*.tf")):
        for block_kind, entries in parse(path).items():
            if kind not in (None, block_kind):
                continue
            for entry in entries:
                yield from _labelled(block_kind, entry, path)


def _labelled(kind: str, entry: dict[str, Any], path: Path) -> Iterator[Block]:
    depth = {"resource": 2, "data": 2, "variable": 1, "output": 1, "module": 1, "provider": 1}
    levels = depth.get(kind, 0)
    stack: list[tuple[tuple[str, ...], dict[str, Any]]] = [((), entry)]
    for _ in range(levels):
        stack = [
            ((*labels, name(key)), value)
            for labels, body in stack
            for key, value in body.items()
            if not is_meta(key)
        ]
    for labels, body in stack:
        yield Block(kind, labels, body, path)


def resources(directory: Path) -> dict[tuple[str, str], Block]:
    return {(b.labels[0], b.labels[1]): b for b in blocks(directory, "resource")}


def data_sources(directory: Path) -> dict[tuple[str, str], Block]:
    return {(b.labels[0], b.labels[1]): b for b in blocks(directory, "data")}


def variables(directory: Path) -> dict[str, dict[str, Any]]:
    return {b.labels[0]: b.body for b in blocks(directory, "variable")}


def local_values(directory: Path) -> dict[str, Any]:
    return {
        key: value
        for block in blocks(directory, "locals")
        for key, value in block.body.items()
        if not is_meta(key)
    }


def variable_default(directory: Path, variable: str) -> Any:
    """The default of `var.<variable>` as a Python value (None without a literal default)."""
    return plain(variables(directory)[variable].get("default"))


def source_text(directory: Path) -> str:
    """The .tf files of `directory` with comments removed (for reference scans)."""
    return "\n".join(_strip_comments(p.read_text()) for p in sorted(directory.glob("*.tf")))


def _strip_comments(text: str) -> str:
    lines = []
    for line in text.splitlines():
        in_string, cut = False, len(line)
        for i, char in enumerate(line):
            if char == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and (char == "#" or line.startswith("//", i)):
                cut = i
                break
        lines.append(line[:cut])
    return "\n".join(lines)


def object_entries(expression: str) -> dict[str, str]:
    """`KEY = value` pairs of the object literals inside an HCL expression string."""
    return dict(re.findall(r"\b([A-Z][A-Z0-9_]*)\s*=\s*([^,}]+?)\s*(?=,|\}|$)", expression))

"""Estimate the container image's size without a docker engine: install exactly what the
Dockerfile installs (the runtime dependencies under requirements.lock, then the project) into a
fresh venv of the image's Python, and measure it on disk.

    .venv/bin/python -m bench.image_size --python /root/.pyenv/versions/3.13.0/bin/python3

The image is python:3.13-slim plus this layer; the base image's size is not measured here (no
docker engine): add the size the registry lists for it. Byte-code compiled by pip is included,
as in the image.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the image's Python version")
    args = parser.parse_args()
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([args.python, "-m", "venv", "--without-pip", str(venv)], check=True)
        empty = tree_bytes(venv)
        pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
        pip += ["-q", "--disable-pip-version-check", "-c", str(ROOT / "requirements.lock")]
        subprocess.run([*pip, *deps], check=True)
        subprocess.run([*pip, "--no-deps", str(ROOT)], check=True)
        size = tree_bytes(venv) - empty
        version = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    print(f"Python {version}: dependencies + project = {size / 2**20:.0f} MiB on disk")


if __name__ == "__main__":
    main()

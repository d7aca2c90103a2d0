"""Regenerate infra/schema/google-provider.json from the prebuilt CDKTF google provider bindings.

The Terraform provider cannot be downloaded where the tests run, but its schema is published in
generated code: `@cdktf/provider-google` on the npm registry has, per resource, a class with the
Terraform type name (`tfResourceType`), the argument names it writes (`synthesizeAttributes`, and
one `...ToTerraform` function per nested block) and the attributes it can read (getters).
This extracts exactly what tests/infra/test_schema.py needs into a compact JSON:

- every resource and data source type name of the provider (a typo in a type fails);
- for each type the module uses, its arguments, nested blocks (recursively) and readable
  attributes.

Run `make schema` after adding a resource type to infra/ (it needs npm and the registry; the
tests never do):

    python -m tools.provider_schema [--package DIR]   # DIR: an unpacked package, else `npm pack`
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import hcl2

ROOT = Path(__file__).resolve().parents[1]
INFRA = ROOT / "infra"
OUTPUT = INFRA / "schema" / "google-provider.json"
PACKAGE = "@cdktf/provider-google@16.12.1"

_TYPE = re.compile(r'^(\w+)\.tfResourceType = "(google_\w+)";', re.MULTILINE)
_CLASS = re.compile(r"^class (\w+) extends cdktf\.(TerraformResource|TerraformDataSource) \{")
_FUNCTION = re.compile(r"^function (\w+)ToTerraform\(struct\) \{\n(.*?)^\}", re.M | re.S)
_KEY = re.compile(r"^\s+(\w+): (.*),$", re.MULTILINE)
_NESTED = re.compile(r"(?<![.\w])(\w+)ToTerraform\b")
_GETTER = re.compile(
    r"get(?:String|Number|Boolean|List|StringMap|NumberMap|BooleanMap|Any)\w*Attribute\('(\w+)'\)"
    r"|interpolationForAttribute\('(\w+)'\)"
    r'|new \w+\(this, "(\w+)"'
)


def used_types(infra: Path = INFRA) -> tuple[set[str], set[str]]:
    """Resource and data source types declared anywhere under infra/."""
    resources: set[str] = set()
    data: set[str] = set()
    for path in sorted(infra.rglob("*.tf")):
        if ".terraform" in path.parts:
            continue
        parsed = hcl2.loads(path.read_text())
        for block in parsed.get("resource", []):
            resources.update(_unquote(name) for name in block)
        for block in parsed.get("data", []):
            data.update(_unquote(name) for name in block)
    return resources, data


def _unquote(name: str) -> str:
    return name.strip('"')


def _keys(body: str) -> dict[str, str | None]:
    """Keys of a generated `return {...}` → the nested function they map to (None: scalar)."""
    keys: dict[str, str | None] = {}
    for key, expression in _KEY.findall(body):
        nested = _NESTED.search(expression)
        keys[key] = nested.group(1) if nested else None
    return keys


def _node(keys: dict[str, str | None], functions: dict[str, str], seen: tuple[str, ...]) -> dict:
    node: dict[str, Any] = {"arguments": sorted(k for k, fn in keys.items() if fn is None)}
    blocks = {}
    for key, fn in sorted(keys.items()):
        if fn is None:
            continue
        if fn in seen or fn not in functions:  # recursive structure: stop at the first repeat
            blocks[key] = {"arguments": [], "blocks": {}, "open": True}
            continue
        blocks[key] = _node(_keys(functions[fn]), functions, (*seen, fn))
    node["blocks"] = blocks
    return node


def extract_file(text: str) -> dict[str, tuple[str, dict]]:
    """{type: (kind, schema)} for the resource or data source a generated index.js defines."""
    functions = {name: body for name, body in _FUNCTION.findall(text)}
    found: dict[str, tuple[str, dict]] = {}
    types = dict(_TYPE.findall(text))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _CLASS.match(line)
        if not match or match.group(1) not in types:
            continue
        name, base = match.groups()
        end = next(j for j in range(i, len(lines)) if lines[j].startswith(f"{name}.tfResourceType"))
        body = "\n".join(lines[i:end])
        synth = re.search(r"synthesizeAttributes\(\) \{\n\s+return \{\n(.*?)\n\s+\};", body, re.S)
        keys = _keys(synth.group(1)) if synth else {}
        node = _node(keys, functions, ())
        readable = {next(g for g in groups if g) for groups in _GETTER.findall(body)}
        node["readable"] = sorted(readable | set(keys))
        kind = "resource" if base == "TerraformResource" else "data"
        found[types[name]] = (kind, node)
    return found


def extract(package: Path, wanted: tuple[set[str], set[str]]) -> dict[str, Any]:
    resource_types: set[str] = set()
    data_types: set[str] = set()
    resources: dict[str, dict] = {}
    data: dict[str, dict] = {}
    for index in sorted((package / "lib").glob("*/index.js")):
        for type_name, (kind, node) in extract_file(index.read_text()).items():
            if kind == "resource":
                resource_types.add(type_name)
                if type_name in wanted[0]:
                    resources[type_name] = node
            else:
                data_types.add(type_name)
                if type_name in wanted[1]:
                    data[type_name] = node
    meta = json.loads((package / "package.json").read_text())
    provider = (package / "lib" / "provider" / "index.js").read_text()
    version = re.search(r"providerVersion: '([\d.]+)'", provider)
    return {
        "source": f"{meta['name']}@{meta['version']} (npm) via tools/provider_schema.py",
        "provider": "hashicorp/google",
        "provider_version": version.group(1) if version else None,
        "resource_types": sorted(resource_types),
        "data_source_types": sorted(data_types),
        "resources": resources,
        "data_sources": data,
    }


def _unpack(workdir: Path) -> Path:
    subprocess.run(["npm", "pack", "--silent", PACKAGE], cwd=workdir, check=True)
    [tarball] = workdir.glob("*.tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(workdir, filter="data")
    return workdir / "package"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, help="an unpacked @cdktf/provider-google")
    args = parser.parse_args()
    wanted = used_types()
    with tempfile.TemporaryDirectory() as tmp:
        package = args.package or _unpack(Path(tmp))
        schema = extract(package, wanted)
    missing = (wanted[0] - set(schema["resources"])) | (wanted[1] - set(schema["data_sources"]))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size} bytes)")
    if missing:
        raise SystemExit(f"not in the provider: {sorted(missing)}")


if __name__ == "__main__":
    main()

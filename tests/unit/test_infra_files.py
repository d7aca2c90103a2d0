"""Cheap invariants of the infrastructure files (nothing is applied or built here).

Terraform providers cannot be downloaded in the test environment, so instead of
`terraform validate` this checks cross-references with a small HCL block scanner: variables,
outputs, resources and locals that are used exist, the env vars match `Settings`, and the
names shared with the code (topics, services, targets) agree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from confidant.jobs import topic_id
from confidant.jobs.pubsub import _KIND
from confidant.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "infra" / "modules" / "confidant"
DEV = ROOT / "infra" / "envs" / "dev"

_BLOCK = re.compile(r"^(resource|data|variable|output|module|locals|terraform|provider)\b(.*?)\{")


@dataclass(frozen=True)
class Block:
    kind: str
    labels: tuple[str, ...]
    body: str


def strip_comments(text: str) -> str:
    """Drop `#` and `//` comments outside strings (HCL strings here never span lines)."""
    lines = []
    for line in text.splitlines():
        in_string = False
        cut = len(line)
        for i, char in enumerate(line):
            if char == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and (char == "#" or line.startswith("//", i)):
                cut = i
                break
        lines.append(line[:cut])
    return "\n".join(lines)


def blocks(path: Path) -> list[Block]:
    """Top-level blocks of a .tf file (braces inside `${...}` are balanced, so counting works)."""
    text = strip_comments(path.read_text())
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _BLOCK.match(lines[i])
        if not match:
            assert lines[i].strip() == "", f"{path.name}: unexpected top-level line {lines[i]!r}"
            i += 1
            continue
        depth, body = 0, []
        start = i
        while True:
            depth += lines[i].count("{") - lines[i].count("}")
            body.append(lines[i])
            if depth == 0:
                break
            i += 1
            assert i < len(lines), f"{path.name}: unbalanced braces from line {start + 1}"
        labels = tuple(re.findall(r'"([^"]*)"', match.group(2)))
        found.append(Block(match.group(1), labels, "\n".join(body)))
        i += 1
    return found


def all_blocks(directory: Path) -> list[Block]:
    return [block for path in sorted(directory.glob("*.tf")) for block in blocks(path)]


def top_level_attributes(body: str) -> list[str]:
    """Attribute names at depth 1 of a block body."""
    names, depth = [], 0
    for line in body.splitlines():
        if depth == 1:
            match = re.match(r"^\s*([A-Za-z_][\w-]*)\s*=", line)
            if match:
                names.append(match.group(1))
        depth += line.count("{") - line.count("}")
    return names


def variables(directory: Path) -> dict[str, bool]:
    """Declared variables → whether they have a default."""
    return {
        block.labels[0]: "default" in top_level_attributes(block.body)
        for block in all_blocks(directory)
        if block.kind == "variable"
    }


def source_text(directory: Path) -> str:
    return "\n".join(strip_comments(p.read_text()) for p in sorted(directory.glob("*.tf")))


# --- Terraform cross-references -------------------------------------------------------------


@pytest.mark.parametrize("directory", [MODULE, DEV], ids=["module", "dev"])
def test_every_var_reference_is_declared(directory: Path) -> None:
    used = set(re.findall(r"\bvar\.(\w+)", source_text(directory)))
    assert used, "no variables referenced at all?"
    assert used <= set(variables(directory)), used - set(variables(directory))


def test_dev_root_passes_only_module_variables_and_all_required_ones() -> None:
    [module] = [b for b in all_blocks(DEV) if b.kind == "module" and b.labels == ("confidant",)]
    passed = set(top_level_attributes(module.body)) - {"source"}
    declared = variables(MODULE)
    assert passed <= set(declared), f"unknown module inputs: {passed - set(declared)}"
    required = {name for name, has_default in declared.items() if not has_default}
    assert required <= passed, f"required module inputs not passed: {required - passed}"
    assert re.search(r'source\s*=\s*"\.\./\.\./modules/confidant"', module.body)


def test_dev_root_uses_only_module_outputs() -> None:
    outputs = {b.labels[0] for b in all_blocks(MODULE) if b.kind == "output"}
    used = set(re.findall(r"\bmodule\.confidant\.(\w+)", source_text(DEV)))
    assert used and used <= outputs, used - outputs


def test_tfvars_example_sets_only_root_variables() -> None:
    text = (DEV / "terraform.tfvars.example").read_text()
    keys = set(re.findall(r"^#?\s*([a-z_]+)\s*=", text, flags=re.MULTILINE))
    assert keys and keys <= set(variables(DEV)), keys - set(variables(DEV))
    required = {name for name, has_default in variables(DEV).items() if not has_default}
    uncommented = set(re.findall(r"^([a-z_]+)\s*=", text, flags=re.MULTILINE))
    assert required <= uncommented


def test_referenced_resources_data_and_locals_exist() -> None:
    module_blocks = all_blocks(MODULE)
    text = source_text(MODULE)
    resources = {(b.labels[0], b.labels[1]) for b in module_blocks if b.kind == "resource"}
    data = {(b.labels[0], b.labels[1]) for b in module_blocks if b.kind == "data"}
    for prefix, kind, name in re.findall(r"(data\.)?\b(google_[a-z0-9_]+)\.([a-z0-9_]+)", text):
        wanted = data if prefix else resources
        assert (kind, name) in wanted, f"{prefix}{kind}.{name} is referenced but not declared"
    declared_locals = {
        name
        for block in module_blocks
        if block.kind == "locals"
        for name in top_level_attributes(block.body)
    }
    used_locals = set(re.findall(r"\blocal\.(\w+)", text))
    assert used_locals <= declared_locals, used_locals - declared_locals


def test_service_env_vars_are_settings_that_validate() -> None:
    text = strip_comments((MODULE / "cloud_run.tf").read_text())
    env = dict(re.findall(r"^\s*(CONFIDANT_[A-Z_]+)\s*=\s*(.+?)\s*$", text, flags=re.MULTILINE))
    for required in (
        "CONFIDANT_STORE",
        "CONFIDANT_JOBS",
        "CONFIDANT_AUTH",
        "CONFIDANT_PROJECT_ID",
        "CONFIDANT_FIREBASE_PROJECT_ID",
    ):
        assert required in env
    fields = set(Settings.model_fields)
    for name in env:
        assert name.removeprefix("CONFIDANT_").lower() in fields, f"{name} is not a Settings field"
    literals = {
        name.removeprefix("CONFIDANT_").lower(): value.strip('"')
        for name, value in env.items()
        if value.startswith('"')
    }
    # The cloud combination must be one Settings accepts (firebase auth needs its project).
    settings = Settings(**literals, firebase_project_id="p", project_id="p")  # type: ignore[arg-type]
    assert (settings.store, settings.jobs, settings.auth) == ("firestore", "pubsub", "firebase")
    assert "GOOGLE_API_KEY" in text and "secret_key_ref" in text


def test_topic_naming_and_kinds_match_the_code() -> None:
    pubsub = re.sub(r"\s+", " ", strip_comments((MODULE / "pubsub.tf").read_text()))
    assert 'name = "${var.topic_prefix}-${each.key}"' in pubsub
    assert topic_id("confidant", "emotion") == "confidant-emotion"
    kinds_block = next(b for b in all_blocks(MODULE) if b.labels == ("job_kinds",))
    assert re.search(r'default\s*=\s*\["emotion", "summary"\]', kinds_block.body)
    [terraform_rule] = re.findall(r'regex\("([^"]+)"', kinds_block.body)
    assert terraform_rule == _KIND.pattern
    assert "dead_letter_policy" in pubsub and "oidc_token" in pubsub and "retry_policy" in pubsub


def test_one_service_account_per_workload() -> None:
    text = source_text(MODULE)
    assert re.search(r'workloads\s*=\s*toset\(\["chat", "jobs"\]\)', text)
    for service in ("chat", "jobs"):
        assert f'google_service_account.workload["{service}"].email' in text


def test_firestore_ttl_and_exemptions() -> None:
    text = source_text(MODULE)
    assert re.search(r'collection\s*=\s*"jobs"\s*\n\s*field\s*=\s*"expire_at"', text)
    assert "ttl_config {}" in text
    exempt = next(b for b in all_blocks(MODULE) if b.labels == ("firestore_unindexed_fields",))
    assert 'field = "events"' in exempt.body and 'field = "state"' in exempt.body


def test_terraform_files_are_formatted() -> None:
    terraform = shutil.which("terraform")
    if terraform is None:
        pytest.skip("terraform is not installed")
    result = subprocess.run(
        [terraform, "fmt", "-check", "-recursive", str(ROOT / "infra")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"not formatted: {result.stdout}"


# --- Dockerfile and Cloud Build -------------------------------------------------------------


def test_dockerfile() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim$", text, flags=re.MULTILINE)
    assert "pip install -c requirements.lock ." in text
    cmd = next(line for line in text.splitlines() if line.startswith("CMD "))
    for part in ("functions-framework", "--source=functions/main.py", "--asgi", "$PORT"):
        assert part in cmd
    assert "--host=0.0.0.0" in cmd
    assert re.search(r"FUNCTION_TARGET=chat\b", text)
    # Every package setuptools installs must be copied into the image.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        assert re.search(rf"^COPY {package} \./{package}$", text, flags=re.MULTILINE), package


def test_chat_target_exists() -> None:
    main = ROOT / "functions" / "main.py"
    if not main.exists():
        pytest.skip("functions/main.py does not exist yet")
    assert re.search(r"^(async def chat\b|def chat\b|chat\s*=)", main.read_text(), re.MULTILINE)


def test_cloudbuild_tests_builds_pushes_and_deploys() -> None:
    config = yaml.safe_load((ROOT / "cloudbuild.yaml").read_text())
    steps = config["steps"]
    assert [step["id"] for step in steps] == ["test", "build", "push", "deploy"]
    test_step, _, _, deploy = steps
    assert "make test" in test_step["args"][-1]
    assert "CI=true" in test_step["env"]
    assert "emulators" in test_step["name"]
    assert "gcloud run deploy" in deploy["args"][-1]
    # Terraform names the services "<name_prefix>-chat" / "-jobs" with name_prefix "confidant".
    assert config["substitutions"]["_CHAT_SERVICE"] == "confidant-chat"
    assert config["substitutions"]["_JOBS_SERVICE"] == "confidant-jobs"
    assert re.search(r'name\s*=\s*"\$\{var\.name_prefix\}-chat"', source_text(MODULE))
    # Cloud Build substitutes $name itself: bash variables must be written $$name.
    for step in steps:
        for arg in step.get("args", []):
            unescaped = re.findall(r"(?<!\$)\$([a-z]\w*)", arg)
            assert not unescaped, f"step {step['id']}: escape bash variables as $$: {unescaped}"

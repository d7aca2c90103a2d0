"""The Dockerfile and cloudbuild.yaml agree with the project and the Terraform (nothing is built
or deployed here: docker and gcloud are not available; the smoke script itself is exercised in
tests/e2e/test_smoke_script.py)."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.infra.test_drift import code_function_targets, terraform_services
from tests.support import terraform as tf

ROOT = tf.ROOT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def newest_supported_python() -> str:
    spec = PYPROJECT["project"]["requires-python"]
    [(major, below)] = re.findall(r"<(\d+)\.(\d+)", spec)
    return f"{major}.{int(below) - 1}"


def test_dockerfile_serves_every_target_from_locked_deps_as_non_root() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(rf"^FROM python:{newest_supported_python()}-slim$", text, re.MULTILINE)
    assert "pip install -c requirements.lock -r /tmp/deps.txt" in text
    assert "pip install --no-deps -c requirements.lock ." in text
    [user] = re.findall(r"^USER (\S+)$", text, re.MULTILINE)
    assert user not in ("root", "0")
    cmd = next(line for line in text.splitlines() if line.startswith("CMD "))
    for part in ('--target="$FUNCTION_TARGET"', "--source=functions/main.py", "--asgi", "$PORT"):
        assert part in cmd
    assert "--host=0.0.0.0" in cmd
    ignored = (ROOT / ".dockerignore").read_text().split()
    for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        assert re.search(rf"^COPY {package} \./{package}$", text, flags=re.MULTILINE), package
        assert package not in ignored


def test_classifiers_and_ruff_cover_the_supported_pythons() -> None:
    classifiers = PYPROJECT["project"]["classifiers"]
    assert f"Programming Language :: Python :: {newest_supported_python()}" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers


def cloudbuild() -> dict:
    return yaml.safe_load((ROOT / "cloudbuild.yaml").read_text())


def test_cloudbuild_steps() -> None:
    steps = {step["id"]: step for step in cloudbuild()["steps"]}
    assert list(steps) == ["test", "build", "push", "deploy", "smoke-test", "rollback-on-failure"]
    script = steps["test"]["args"][-1]
    assert script.index("make install") < script.index("make lint") < script.index("make test")
    assert "CI=true" in steps["test"]["env"] and "emulators" in steps["test"]["name"]
    assert "RepoDigests" in steps["push"]["args"][-1]
    deploy = steps["deploy"]["args"][-1]
    assert '--image="$$(cat /workspace/image)"' in deploy  # by digest, never by tag
    smoke = steps["smoke-test"]["args"][-1]
    assert "scripts/smoke_test.py" in smoke and "touch /workspace/smoke_failed" in smoke
    rollback = steps["rollback-on-failure"]["args"][-1]
    assert "update-traffic" in rollback and "--to-revisions" in rollback
    assert rollback.rstrip().endswith("exit 1")


def test_cloudbuild_deploys_the_services_terraform_creates() -> None:
    config = cloudbuild()
    deploy = next(s for s in config["steps"] if s["id"] == "deploy")["args"][-1]
    [services] = re.findall(r"for service in ([\w ]+); do", deploy)
    assert set(services.split()) == set(terraform_services())
    assert set(services.split()) >= code_function_targets()
    prefix = tf.variable_default(tf.MODULE, "name_prefix")
    assert config["substitutions"]["_SERVICE_PREFIX"] == prefix
    # The smoke test's secrets are the ones Terraform creates (and lets the deployer read).
    smoke = tf.resources(tf.MODULE)[("google_secret_manager_secret", "smoke")].body
    assert smoke["for_each"] == "${local.smoke_secrets}"
    secrets = tf.local_values(tf.MODULE)["smoke_secrets"]
    for entry in config["availableSecrets"]["secretManager"]:
        [secret] = re.findall(r"/secrets/([^/]+)/versions/", entry["versionName"])
        assert secret.replace("${_SERVICE_PREFIX}", "${var.name_prefix}") in secrets


def test_the_deployer_may_roll_out_only_the_services_cloudbuild_deploys() -> None:
    # cloudbuild.yaml's gcloud calls (describe, deploy, update-traffic) act on our services
    # alone: a project-wide roles/run.developer would let the deployer change every Cloud Run
    # service and job in the project.
    scripts = " ".join(arg for step in cloudbuild()["steps"] for arg in step.get("args", []))
    calls = set(re.findall(r"gcloud run (\w+ ?[\w-]*)", scripts))
    assert calls <= {"services describe", "deploy ", "services update-traffic"}, calls
    resources = tf.resources(tf.MODULE)
    project_roles = [
        tf.literal(block.body.get("role"))
        for (kind, _), block in resources.items()
        if kind == "google_project_iam_member" and "var.deployer_member" in str(block.body)
    ]
    assert "roles/run.developer" not in project_roles
    grant = resources[("google_cloud_run_v2_service_iam_member", "deployer_deploys")].body
    assert tf.literal(grant["role"]) == "roles/run.developer"
    assert "local.workloads" in grant["for_each"]  # each service terraform_services() lists
    assert "google_cloud_run_v2_service.service[each.key]" in grant["name"]


def test_cloudbuild_escapes_bash_variables() -> None:
    # Cloud Build substitutes $name itself: bash variables must be written $$name.
    for step in cloudbuild()["steps"]:
        for arg in step.get("args", []):
            unescaped = re.findall(r"(?<!\$)\$([a-z]\w*)", arg)
            assert not unescaped, f"step {step['id']}: escape bash variables as $$: {unescaped}"


def lock_pins(path: str) -> list[Requirement]:
    lines = (ROOT / path).read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("python", ["3.11", "3.12", "3.13"])
@pytest.mark.parametrize("lock", ["requirements.lock", "tools/checkov.lock"])
def test_each_lock_pins_one_version_of_everything_for_each_supported_python(
    lock: str, python: str
) -> None:
    environment = {"python_version": python, "python_full_version": f"{python}.0"}
    environment |= {"sys_platform": "linux", "platform_machine": "x86_64"}
    applicable: dict[str, list[str]] = {}
    for pin in lock_pins(lock):
        if pin.marker is None or pin.marker.evaluate(environment):
            applicable.setdefault(canonicalize_name(pin.name), []).append(str(pin.specifier))
    several = {name: pins for name, pins in applicable.items() if len(pins) != 1}
    assert not several, several
    assert all(spec.startswith("==") for [spec] in applicable.values())
    if lock == "requirements.lock":
        project = PYPROJECT["project"]
        wanted = project["dependencies"] + project["optional-dependencies"]["dev"]
        missing = {canonicalize_name(Requirement(r).name) for r in wanted} - set(applicable)
        assert not missing, f"not pinned (run `make lock`): {missing}"

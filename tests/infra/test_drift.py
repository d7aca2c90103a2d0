"""Drift between the code and the Terraform: reads both, fails when they disagree.

What is compared, and where each side comes from:

- settings: fields of `confidant.settings.Settings` (env name = alias or `CONFIDANT_<FIELD>`)
  and `os.environ` reads in confidant/, agents/, functions/ | `local.common_env` and
  `local.secret_env` (cloud_run.tf);
- function targets: module-level functions of functions/main.py | keys of `local.services`
  (each service's FUNCTION_TARGET);
- topics: `code_job_kinds()` through `confidant.jobs.topic_id` | `var.job_kinds` through the
  topic name template (pubsub.tf);
- subscriptions: `subscription_path(...)` calls in the code | google_pubsub_subscription names;
- Firestore indexes: the queries tests/support/firestore_queries.py finds in every module that
  imports Firestore | `local.firestore_composite_indexes`, `local.firestore_collection_group_fields`
  and the exempted fields (firestore.tf).

How a new capability declares what it needs (and how to fix a red test at merge time):

- A new setting: add the field to `Settings`, then either set it for the services in
  `local.common_env` (infra/modules/confidant/cloud_run.tf; a module variable if it differs per
  environment) or add it to `DEFAULT_IS_RIGHT_IN_CLOUD` below with the reason its default is
  right in a deployment. A secret goes in `local.secret_env` (env name => secret id).
- A new functions-framework target: define it at module level in functions/main.py and add a
  service to `local.services` whose key is the target name (it gets its own service account).
- A new job kind: declare it where `code_job_kinds()` finds it (the app registry's `job_kinds`,
  or `confidant.jobs.JOB_KINDS`) and add it to `var.job_kinds`; the topic, push subscription,
  dead-letter topic, inspection subscription, IAM and alert follow from the for_each.
- A new Firestore query: write it as one fluent chain (or local names within one function); if
  it needs a composite index this test prints the index to add to
  `local.firestore_composite_indexes` (firestore.tf); a collection-group query on one field needs
  an entry in `local.firestore_collection_group_fields`.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from confidant.jobs import topic_id
from confidant.observability.stream_errors import STREAM_ERROR_EVENT
from confidant.settings import Settings
from tests.support import terraform as tf
from tests.support.firestore_queries import VECTOR, Query, queries_in, queries_in_source

ROOT = tf.ROOT
CODE_DIRECTORIES = ("confidant", "agents", "functions")

# Settings whose default is what a cloud deployment wants, so Terraform does not set them.
# Every entry says why; a setting neither set by Terraform nor listed here fails the drift test.
DEFAULT_IS_RIGHT_IN_CLOUD: dict[str, str] = {
    "sqlite_path": "the embedded store's file; the services use Firestore",
    "jwks_url": "Google's published keys of Firebase ID tokens",
    "gemini_base_url": "only tests point google-genai at a local server",
    "litellm_model": "LiteLLM is not the cloud model (CONFIDANT_MODEL=gemini); extra_env sets it",
    "litellm_api_base": "as litellm_model",
    "litellm_api_key": "as litellm_model (it would go in local.secret_env)",
    "offline_chunk_delay_ms": "the offline model never runs in a deployment",
    "retry_delays": "tuned for Gemini's transient errors; extra_env overrides",
    "retry_max_delay": "as retry_delays",
    "model_timeout_s": "as retry_delays",
    "store_timeout_s": "a bounded wait for the lease before a clear 503; no deployment reason",
    "commit_timeout_s": "a bounded wait for the commit before commit_outcome_unknown; no "
    "deployment reason",
    "default_app": "product default; extra_env overrides",
    "busy_wait_s": "how long wait/enqueue/interrupt wait; product default; extra_env overrides",
    "busy_poll_s": "a quarter second bounds an interrupt's delay at one small read per poll; "
    "extra_env overrides",
    "web_ui": "the web page has no Firebase sign-in yet, so it stays off in the cloud",
    "otlp_endpoint": "the cloud exports to Cloud Trace (CONFIDANT_TRACE_EXPORTER=cloudtrace)",
    "langfuse_host": "Langfuse export is opt-in; extra_env and a secret set it",
    "langfuse_public_key": "as langfuse_host",
    "langfuse_secret_key": "as langfuse_host (it would go in local.secret_env)",
    "trace_content": "message text stays out of traces unless an operator opts in",
    "log_level": "INFO is right for Cloud Logging; extra_env overrides",
    "notion_token": "a secret: cloud_run.tf gives it to the chat service only (from the "
    "notion_token secret) when a Notion database is configured",
    "notion_base_url": "Notion's public API; only tests point it at a local server",
    "notion_version": "the Notion-Version the client is written against",
    "notion_max_attempts": "tuned for Notion's documented rate limits; extra_env overrides",
    "taskflow_max_detail_rounds": "product default loop limit; extra_env overrides",
    "taskflow_max_classification_corrections": "as taskflow_max_detail_rounds",
    "artifacts": "auto picks Cloud Storage because CONFIDANT_ARTIFACTS_BUCKET is set",
    "artifacts_dir": "local artifact files are for the embedded default only",
    "job_deadline_s": "below the push subscription's ack deadline as it is (checked below)",
    "job_publish_timeout_s": "how long a turn's background publish waits; no deployment reason",
    "sweep_limit": "bounded sweep per scheduler call; extra_env overrides",
    "sweep_grace_s": "as sweep_limit",
    "sweep_max_republish": "as sweep_limit",
    "sweep_interval_s": "the in-process sweep of the embedded default; Cloud Scheduler calls "
    "the sweep target in the cloud",
    "crisis_model": "chosen from the held-out measurements (docs/safety.md); extra_env overrides",
    "crisis_classifier_timeout_s": "the issue's 1.5 s budget; the lexicon's verdict stands after",
    "embedding_batch_size": "the model's documented per-request limit",
    "embedding_timeout_s": "one embedding request on the request path; no deployment reason",
    "vector_search_api_url": "the regional Vertex AI endpoint; only tests point it elsewhere",
    "wisdom_per_source_limit": "crowding of one passage's chunks among the hits (product)",
    "wisdom_timeout_s": "past it the coach goes on without wisdom (product)",
    "protocol_timeout_s": "product default (1 hour) before a returning user confirms; extra_env",
    "agent_config_ttl_s": "how soon other instances see an admin's config change (10 s)",
    "admin_claim": "the Firebase custom claim `admin: true` that admins carry",
    "admin_users": "local mode only: the cloud reads the admin claim from ID tokens",
    "mcp_allow_stdio": "never in the cloud: a stored command would run as a process",
    "mcp_breaker_failures": "circuit breaker tuning per MCP server; extra_env overrides",
    "mcp_breaker_cooldown_s": "as mcp_breaker_failures",
    "mcp_max_toolsets": "pooled MCP sessions per instance; extra_env overrides",
    "mcp_tool_list_ttl_s": "as mcp_max_toolsets",
    "agent_models": "empty = every agent on the deployment's model; an operator opts in per "
    "agent through extra_env (a JSON map)",
    "lease_ttl_s": "renewed every third of it; no deployment reason to change",
    "window_events": "product default of the model window; extra_env overrides",
    "window_tool_invocations": "as window_events",
    "event_cache_size": "per-process cache size; fits the services' 1 GiB",
    "max_message_chars": "API limit, the same everywhere",
    "max_body_bytes": "API limit, the same everywhere",
    "tiers": "the product's tiers and their daily limits, the same everywhere; extra_env overrides",
    "default_tier": "as tiers",
    "rate_limit_user_per_min": "API limit per instance, the same everywhere; extra_env overrides",
    "rate_limit_user_burst": "as rate_limit_user_per_min",
    "rate_limit_ip_per_min": "as rate_limit_user_per_min (armor.tf adds the edge limit)",
    "rate_limit_ip_burst": "as rate_limit_user_per_min",
    "max_llm_calls_per_turn": "platform cap per turn; app configs lower it at run time",
    "max_tool_calls_per_turn": "as max_llm_calls_per_turn",
    "default_locale": "product default; extra_env overrides",
    "k_service": "Cloud Run sets K_SERVICE itself",
    "stream_retention_s": "resumable-stream product default (10 min); the documents carry their "
    "own expire_at, so the TTL policies need no value; extra_env overrides",
    "stream_flush_s": "log write batching, the same on every deployment; extra_env overrides",
    "stream_max_parts": "per-turn log bound, sized under Firestore's document limit",
    "stream_max_bytes": "as stream_max_parts",
    "stream_poll_s": "how often a resumed stream polls the log; extra_env overrides",
}

# Environment variables read by something other than Settings or our own os.environ reads.
RUNTIME_ENV = {
    "FUNCTION_TARGET": "functions-framework (the Dockerfile's CMD)",
    "GOOGLE_CLOUD_PROJECT": "google-cloud client libraries and google-genai on Vertex",
}


# --- code side -------------------------------------------------------------------------------


def code_files() -> list[Path]:
    return sorted(p for d in CODE_DIRECTORIES for p in (ROOT / d).rglob("*.py"))


def setting_env_names() -> dict[str, str]:
    """Settings field → the environment variable it is read from."""
    prefix = Settings.model_config.get("env_prefix", "")
    names = {}
    for field, info in Settings.model_fields.items():
        alias = info.validation_alias
        names[field] = alias if isinstance(alias, str) else f"{prefix}{field}".upper()
    return names


# Client-side programs that run on a person's machine, not in a deployed service: their
# environment variables (CONFIDANT_URL, CONFIDANT_TOKEN, …) are never Terraform's business.
CLIENT_DIRECTORIES = (ROOT / "confidant" / "cli",)


def environ_reads() -> set[str]:
    """Names read with os.environ.get("X"), os.environ["X"] or os.getenv("X") in the services."""
    names = set()
    for path in code_files():
        if any(path.is_relative_to(client) for client in CLIENT_DIRECTORIES):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            key = None
            if isinstance(node, ast.Call) and node.args:
                call = ast.unparse(node.func)
                if call in ("os.environ.get", "os.getenv", "environ.get", "getenv"):
                    key = node.args[0]
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
                "os.environ",
                "environ",
            ):
                key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                names.add(key.value)
    return names


def code_function_targets() -> set[str]:
    """Module-level callables of functions/main.py (functions-framework serves them by name)."""
    tree = ast.parse((ROOT / "functions" / "main.py").read_text())
    targets = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            targets.add(node.name)
        elif isinstance(node, ast.Assign):
            targets.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {t for t in targets if not t.startswith("_")}


def code_job_kinds() -> set[str]:
    """Job kinds the code publishes.

    Looked up where the code declares them: `job_kinds` of every app spec in `agents.registry`
    (any module-level object, or item of a module-level dict/list/tuple, with a `job_kinds`
    attribute) and `confidant.jobs.JOB_KINDS`. Neither exists before the jobs issue lands.
    """
    kinds: set[str] = set()
    try:
        registry = importlib.import_module("agents.registry")
    except ModuleNotFoundError:
        registry = None
    if registry is not None:
        for value in vars(registry).values():
            items = value.values() if isinstance(value, dict) else value
            for item in items if isinstance(items, list | tuple | type({}.values())) else [value]:
                kinds.update(getattr(item, "job_kinds", None) or ())
    jobs = importlib.import_module("confidant.jobs")
    kinds.update(getattr(jobs, "JOB_KINDS", ()))
    return kinds


def code_subscriptions() -> set[str]:
    """Subscription ids the code pulls from: literal second arguments of subscription_path()."""
    names = set()
    for path in code_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "subscription_path"
            ):
                argument = node.args[1] if len(node.args) > 1 else None
                assert isinstance(argument, ast.Constant), (
                    f"{path}:{node.lineno}: subscription id is not a literal; extend "
                    "code_subscriptions() to resolve it"
                )
                names.add(argument.value)
    return names


def firestore_modules() -> list[Path]:
    return [p for p in code_files() if "google.cloud import firestore" in p.read_text()]


# --- Terraform side --------------------------------------------------------------------------


def terraform_services() -> dict[str, dict[str, Any]]:
    return tf.plain(tf.local_values(tf.MODULE)["services"])


def terraform_env() -> dict[str, str]:
    """Env var → HCL value expression, for every service (common_env and secret_env)."""
    values = tf.local_values(tf.MODULE)
    env = tf.object_entries(values["common_env"])
    # Optional blocks merged in (`cond ? {…} : {}`), e.g. local.wisdom_env: their "on" side.
    for name, expression in values.items():
        if f"local.{name}" in values["common_env"] and "?" in str(expression):
            env.update(tf.object_entries(str(expression).split("?", 1)[1].rsplit(":", 1)[0]))
    env.update(dict.fromkeys(tf.object_entries(values["secret_env"]), "<secret>"))
    return env


def env_value(expression: str) -> str:
    """A plausible value of an env expression: literals as written, var.X as X's default."""
    text = expression.strip()
    if (value := tf.literal(text)) is not None:
        return str(value)
    if match := re.fullmatch(r"(jsonencode\(|tostring\()?var\.(\w+)\)?", text):
        default = tf.variable_default(tf.MODULE, match.group(2))
        if match.group(1) == "jsonencode(":
            return json.dumps(default)
        return (
            "p" if default is None else str(default).lower() if default is False else str(default)
        )
    conditional = re.fullmatch(r'\$?\{?var\.(\w+) == null \? (".*?") : (".*?")\}?', text)
    if conditional:  # `var.x == null ? "a" : "b"` with x's default
        unset = tf.variable_default(tf.MODULE, conditional.group(1)) is None
        return str(tf.literal(conditional.group(2 if unset else 3)))
    switch = re.fullmatch(r'\$?\{?var\.(\w+) \? (".*?") : (".*?")\}?', text)
    if switch:  # `var.flag ? "a" : "b"` with flag's default
        on = tf.variable_default(tf.MODULE, switch.group(1)) is True
        return str(tf.literal(switch.group(2 if on else 3)))
    return "p"  # any other expression (project ids, resource names): a placeholder string


def render(template: str, **values: str) -> str:
    """Evaluate an HCL string template made of ${var.x}/${each.key} parts."""
    text = tf.literal(template) or template.strip('"')

    def part(match: re.Match[str]) -> str:
        return values[match.group(1).replace(".", "_")]

    return re.sub(r"\$\{([\w.]+)\}", part, text)


def resource_body(type_name: str, name: str) -> dict[str, Any]:
    return tf.resources(tf.MODULE)[(type_name, name)].body


def terraform_job_kinds() -> set[str]:
    return set(tf.variable_default(tf.MODULE, "job_kinds"))


# --- settings --------------------------------------------------------------------------------


def test_every_env_var_terraform_sets_is_read_by_the_code() -> None:
    read = set(setting_env_names().values()) | environ_reads() | set(RUNTIME_ENV)
    unknown = set(terraform_env()) - read
    assert not unknown, f"Terraform sets env vars nothing reads: {sorted(unknown)}"


def test_every_setting_is_set_by_terraform_or_its_default_is_justified() -> None:
    names = setting_env_names()
    set_by_terraform = set(terraform_env())
    missing = [
        f"{field} ({env})"
        for field, env in names.items()
        if env not in set_by_terraform and field not in DEFAULT_IS_RIGHT_IN_CLOUD
    ]
    assert not missing, (
        "settings neither set in local.common_env (cloud_run.tf) nor listed in "
        f"DEFAULT_IS_RIGHT_IN_CLOUD (tests/infra/test_drift.py): {missing}"
    )
    stale = set(DEFAULT_IS_RIGHT_IN_CLOUD) - set(names)
    assert not stale, f"DEFAULT_IS_RIGHT_IN_CLOUD lists settings that no longer exist: {stale}"
    both = {f for f in DEFAULT_IS_RIGHT_IN_CLOUD if names.get(f) in set_by_terraform}
    assert not both, f"set by Terraform, so not a default: {both}"


def test_every_env_var_the_code_reads_is_set_or_a_setting() -> None:
    reads = environ_reads() - set(setting_env_names().values())
    # Emulator hosts and Cloud Run's own variables are never set by Terraform.
    reads = {r for r in reads if not r.endswith("_EMULATOR_HOST") and not r.startswith("K_")}
    assert reads <= set(terraform_env()) | {"PORT"}, reads - set(terraform_env())


@pytest.mark.parametrize("service", ["chat", "jobs", "sweep"])
def test_each_service_env_validates_as_a_cloud_deployment(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("CONFIDANT_") or name in ("GOOGLE_API_KEY", "K_SERVICE"):
            monkeypatch.delenv(name)
    for name, expression in terraform_env().items():
        monkeypatch.setenv(name, env_value(expression))
    monkeypatch.setenv("K_SERVICE", f"confidant-{service}")
    settings = Settings()  # raises ConfigurationError on a combination that must not start
    assert (settings.store, settings.jobs, settings.auth) == ("firestore", "pubsub", "firebase")
    assert settings.is_cloud and settings.firebase_project_id
    assert settings.pubsub_topic_prefix == tf.variable_default(tf.MODULE, "topic_prefix")


def test_chat_keeps_cpu_for_turns_whose_client_hung_up() -> None:
    chat = terraform_services()["chat"]
    assert chat["cpu_idle"] is False and chat["health_check"] is True
    body = resource_body("google_cloud_run_v2_service", "service")
    probe = body["template"][0]["containers"][0]["dynamic"][-1]['"startup_probe"']["content"][0]
    assert tf.literal(probe["http_get"][0]["path"]) == "/healthz"
    assert tf.variable_default(tf.MODULE, "chat_timeout_s") >= 300  # a streamed turn fits


# --- monitoring ------------------------------------------------------------------------------


def test_the_failed_reply_alert_counts_the_line_the_chat_service_writes() -> None:
    """An `error` part inside a 200 stream shows in no request-log status: the metric must match
    the line the chat service writes for it (confidant/observability/stream_errors.py: its event,
    its level, its code field)."""
    metric = resource_body("google_logging_metric", "chat_stream_errors")
    log_filter = metric["filter"].replace('\\"', '"')
    assert f'jsonPayload.event="{STREAM_ERROR_EVENT}"' in log_filter
    assert "severity>=ERROR" in log_filter  # a server failure, not a cap the user reached
    assert tf.plain(metric["label_extractors"]) == {"error_code": "EXTRACT(jsonPayload.error_code)"}
    alert = resource_body("google_monitoring_alert_policy", "chat_failure_ratio")
    assert "google_logging_metric.chat_stream_errors.name" in str(alert["for_each"])
    assert "each.value.metric" in str(alert["conditions"])


# --- function targets ------------------------------------------------------------------------


def test_every_function_target_the_code_defines_is_deployed() -> None:
    assert code_function_targets() <= set(terraform_services())
    dockerfile = (ROOT / "Dockerfile").read_text()
    [default] = re.findall(r"FUNCTION_TARGET=(\w+)", dockerfile)
    assert default in code_function_targets()


def test_everything_terraform_deploys_exists_in_the_code() -> None:
    missing_targets = set(terraform_services()) - code_function_targets()
    missing_kinds = terraform_job_kinds() - code_job_kinds()
    assert not missing_targets, (
        f"Terraform deploys targets functions/main.py lacks: {missing_targets}"
    )
    assert not missing_kinds, (
        f"Terraform subscribes job kinds the code never publishes: {missing_kinds}"
    )


# --- topics and subscriptions ----------------------------------------------------------------


def test_every_job_kind_the_code_publishes_has_a_topic() -> None:
    missing = code_job_kinds() - terraform_job_kinds()
    assert not missing, f"add to var.job_kinds (variables.tf): {sorted(missing)}"


@pytest.mark.parametrize("kind", sorted(terraform_job_kinds()))
def test_topic_names_match_the_code(kind: str) -> None:
    prefix = tf.variable_default(tf.MODULE, "topic_prefix")
    topic = resource_body("google_pubsub_topic", "jobs")
    assert render(topic["name"], var_topic_prefix=prefix, each_key=kind) == topic_id(prefix, kind)


def test_every_kind_has_push_retry_dead_letter_and_inspection() -> None:
    for_each = {"${local.job_kinds}"}
    push = resource_body("google_pubsub_subscription", "jobs")
    dead_letter_topic = resource_body("google_pubsub_topic", "dead_letter")
    inspect = resource_body("google_pubsub_subscription", "dead_letter")
    assert {push["for_each"], dead_letter_topic["for_each"], inspect["for_each"]} == for_each
    [config] = push["push_config"]
    assert "oidc_token" in config and 'service["jobs"].uri' in config["push_endpoint"]
    assert push["ack_deadline_seconds"] == "${var.job_ack_deadline_s}"
    assert push["retry_policy"][0]["minimum_backoff"] and push["retry_policy"][0]["maximum_backoff"]
    policy = push["dead_letter_policy"][0]
    assert policy["dead_letter_topic"] == "${google_pubsub_topic.dead_letter[each.key].id}"
    assert 5 <= tf.variable_default(tf.MODULE, "job_max_delivery_attempts") <= 100
    assert inspect["topic"] == "${google_pubsub_topic.dead_letter[each.key].id}"
    # The jobs service answers a push within the ack deadline (Cloud Run timeout = deadline).
    assert terraform_services()["jobs"]["timeout_s"] == "${var.job_ack_deadline_s}"


def test_a_job_attempt_gives_up_before_its_push_is_redelivered() -> None:
    # A handler still working when the ack deadline passes is cut off by Cloud Run (timeout =
    # the deadline) and its job redelivered; the code's own per-attempt limit must end first,
    # so a slow attempt fails cleanly (a recorded failure, a nack) instead.
    ack_deadline_s = tf.variable_default(tf.MODULE, "job_ack_deadline_s")
    assert 10 <= ack_deadline_s <= 600  # what Pub/Sub accepts
    assert Settings().job_deadline_s < ack_deadline_s
    assert "var.job_ack_deadline_s >= 10" in str(tf.variables(tf.MODULE)["job_ack_deadline_s"])


def test_every_subscription_the_code_names_exists() -> None:
    prefix = tf.variable_default(tf.MODULE, "topic_prefix")
    declared = {
        render(body["name"], var_topic_prefix=prefix, each_key=kind)
        for (type_name, _), block in tf.resources(tf.MODULE).items()
        if type_name == "google_pubsub_subscription"
        for body in [block.body]
        for kind in terraform_job_kinds()
    }
    assert code_subscriptions() <= declared, code_subscriptions() - declared


def test_sweep_is_scheduled_with_oidc() -> None:
    job = resource_body("google_cloud_scheduler_job", "sweep")
    target = job["http_target"][0]
    assert target["uri"] == '${google_cloud_run_v2_service.service["sweep"].uri}'
    assert "oidc_token" in target


# --- Firestore indexes -----------------------------------------------------------------------


def composite_indexes() -> list[tuple[str, str, list[tuple[str, str]]]]:
    declared = tf.plain(tf.local_values(tf.MODULE)["firestore_composite_indexes"])
    return [
        (
            index["collection"],
            index["query_scope"],
            # A vector field has no order, a dimension instead (find_nearest queries).
            [(f["field_path"], f.get("order") or VECTOR) for f in index["fields"]],
        )
        for index in declared.values()
    ]


def exempt_fields() -> set[tuple[str, str]]:
    defaults = tf.variable_default(tf.MODULE, "firestore_unindexed_fields")
    exempt = {(item["collection"], item["field"]) for item in defaults}
    expire = resource_body("google_firestore_field", "jobs_expire_at")
    exempt.add((tf.literal(expire["collection"]), tf.literal(expire["field"])))
    return exempt


def collection_group_fields() -> set[tuple[str, str]]:
    declared = tf.plain(tf.local_values(tf.MODULE)["firestore_collection_group_fields"])
    return {(item["collection"], item["field"]) for item in declared.values()}


def serves(index: tuple[str, str, list[tuple[str, str]]], query: Query) -> bool:
    collection, scope, fields = index
    if (collection, scope) != (query.collection, query.scope):
        return False
    equality, tail = query.composite_fields()
    head = fields[: len(equality)]
    return {f for f, _ in head} == equality and fields[len(equality) :] == tail


def index_problems(queries: list[Query]) -> Iterator[str]:
    indexes = composite_indexes()
    for query in queries:
        if query.needs_composite():
            if not any(serves(index, query) for index in indexes):
                equality, tail = query.composite_fields()
                fields = [(f, "ASCENDING") for f in sorted(equality)] + tail
                yield (
                    f"{query.where}: no composite index on {query.collection} "
                    f"({query.scope}) {fields}"
                )
            continue
        for field in query.fields:
            if (query.collection, field) in exempt_fields():
                yield f"{query.where}: filters or orders on exempted {query.collection}.{field}"
            if query.scope == "COLLECTION_GROUP" and (
                (query.collection, field) not in collection_group_fields()
            ):
                yield (
                    f"{query.where}: collection-group query on {query.collection}.{field} needs "
                    "an entry in local.firestore_collection_group_fields"
                )


def test_the_store_adapters_are_scanned_and_run_queries() -> None:
    modules = {str(p.relative_to(ROOT)) for p in firestore_modules()}
    assert "confidant/sessions/firestore_store.py" in modules
    assert len(queries_in(firestore_modules(), ROOT)) >= 5


def test_every_query_the_code_runs_has_its_index() -> None:
    problems = list(index_problems(queries_in(firestore_modules(), ROOT)))
    assert not problems, "\n".join(problems)


def test_every_declared_index_serves_a_query() -> None:
    queries = queries_in(firestore_modules(), ROOT)
    unused = [i for i in composite_indexes() if not any(serves(i, q) for q in queries)]
    assert not unused, f"composite indexes no query uses (they cost every write): {unused}"
    group_queries = {
        (q.collection, f) for q in queries if q.scope == "COLLECTION_GROUP" for f in q.fields
    }
    assert collection_group_fields() <= group_queries


def test_index_analysis_finds_what_a_new_query_needs() -> None:
    source = """
from google.cloud import firestore
OUTBOX = "jobs"

async def sweep(client, cutoff, kind):
    query = client.collection(OUTBOX).where(filter=firestore.FieldFilter("published", "==", False))
    if kind:
        query = query.where(filter=firestore.FieldFilter("kind", "==", kind))
    query = query.where(filter=firestore.FieldFilter("created_at", "<", cutoff))
    async for doc in query.order_by("created_at").limit(100).stream():
        yield doc

async def by_app(client):
    return await client.collection_group("memories").where("app", "==", "x").get()
"""
    queries = queries_in_source(source, "example")
    problems = sorted(index_problems(queries))
    assert problems == [
        "example:by_app:14: collection-group query on memories.app needs an entry in "
        "local.firestore_collection_group_fields",
        "example:sweep:10: no composite index on jobs (COLLECTION) "
        "[('kind', 'ASCENDING'), ('published', 'ASCENDING'), ('created_at', 'ASCENDING')]",
        "example:sweep:10: no composite index on jobs (COLLECTION) "
        "[('published', 'ASCENDING'), ('created_at', 'ASCENDING')]",
    ]

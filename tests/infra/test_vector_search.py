"""The wisdom index's Terraform (infra/modules/confidant/vector_search.tf) agrees with the code."""

from __future__ import annotations

from confidant.settings import Settings
from tests.support import terraform as tf


def _resource(kind: str, name: str) -> dict:
    return tf.resources(tf.MODULE)[(kind, name)].body


def test_wisdom_env_names_are_settings_that_validate_together() -> None:
    env = tf.object_entries(
        tf.local_values(tf.MODULE)["wisdom_env"].split("?", 1)[1].rsplit(":", 1)[0]
    )
    assert {"CONFIDANT_WISDOM", "CONFIDANT_EMBEDDINGS"} <= set(env)
    fields = set(Settings.model_fields)
    assert all(name.removeprefix("CONFIDANT_").lower() in fields for name in env), env
    # Every value filled in, the combination is one Settings accepts.
    values = {name.removeprefix("CONFIDANT_").lower(): "x" for name in env}
    values |= {"wisdom": "vertex", "embeddings": "vertex", "embedding_dimensions": "768"}
    settings = Settings.model_validate(values)
    assert settings.wisdom == "vertex"
    assert "local.wisdom_env" in tf.local_values(tf.MODULE)["common_env"]


def test_index_matches_what_the_adapter_assumes() -> None:
    index = _resource("google_vertex_ai_index", "wisdom")
    assert tf.literal(index["index_update_method"]) == "STREAM_UPDATE"  # ingestion upserts
    config = index["metadata"][0]["config"][0]
    # Unit vectors and the dot product: the adapter reads `distance` as the cosine.
    assert tf.literal(config["distance_measure_type"]) == "DOT_PRODUCT_DISTANCE"
    assert tf.literal(config["feature_norm_type"]) == "UNIT_L2_NORM"
    assert "var.wisdom_embedding_dimensions" in str(config["dimensions"])
    endpoint = _resource("google_vertex_ai_index_endpoint", "wisdom")
    assert endpoint["public_endpoint_enabled"] is True


def test_the_ingestion_has_its_own_identity() -> None:
    assert ("google_service_account", "ingest") in tf.resources(tf.MODULE)
    roles = tf.local_values(tf.MODULE)["ingest_roles"]
    assert "roles/aiplatform.user" in roles and "roles/datastore.user" in roles
    assert "roles/iam.serviceAccountTokenCreator" in tf.source_text(tf.MODULE)


def test_the_service_that_queries_the_index_may_call_vertex_ai_without_vertex_gemini() -> None:
    # With wisdom on Vector Search, chat calls findNeighbors with its service account's
    # credentials even when Gemini is reached with an API key (use_vertex false, the default):
    # its account needs roles/aiplatform.user then, and only the services that retrieve wisdom.
    values = tf.local_values(tf.MODULE)
    condition, granted = values["wisdom_roles"].removeprefix("${").split("?", 1)
    assert condition.strip() == "var.wisdom_vector_search"
    assert "roles/aiplatform.user" in granted.split(":", 1)[0]
    assert (
        "local.services[workload].wisdom ? local.wisdom_roles" in values["workload_role_bindings"]
    )
    services = values["services"]
    assert {name for name, body in services.items() if body["wisdom"] is True} == {"chat"}

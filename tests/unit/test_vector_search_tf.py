"""The wisdom index's Terraform (infra/modules/confidant/vector_search.tf) agrees with the code."""

from __future__ import annotations

import re

from confidant.settings import Settings
from tests.unit.test_infra_files import MODULE, all_blocks, strip_comments

TF = MODULE / "vector_search.tf"


def test_wisdom_env_names_are_settings_that_validate_together() -> None:
    text = strip_comments(TF.read_text())
    env = dict(re.findall(r"^\s*(CONFIDANT_[A-Z_]+)\s*=\s*(.+?)\s*$", text, flags=re.MULTILINE))
    assert {"CONFIDANT_WISDOM", "CONFIDANT_EMBEDDINGS"} <= set(env)
    fields = set(Settings.model_fields)
    assert all(name.removeprefix("CONFIDANT_").lower() in fields for name in env), env
    # Every value filled in, the combination is one Settings accepts.
    values = {name.removeprefix("CONFIDANT_").lower(): "x" for name in env}
    values |= {"wisdom": "vertex", "embeddings": "vertex", "embedding_dimensions": "768"}
    settings = Settings.model_validate(values)
    assert settings.wisdom == "vertex"
    assert "local.wisdom_env" in (MODULE / "cloud_run.tf").read_text()


def test_index_matches_what_the_adapter_assumes() -> None:
    index = next(b for b in all_blocks(MODULE) if b.labels == ("google_vertex_ai_index", "wisdom"))
    # Stream updates (the ingestion upserts directly), unit vectors and the dot product (the
    # adapter reads `distance` as the cosine), the embedding size from the same variable.
    assert 'index_update_method = "STREAM_UPDATE"' in index.body
    assert re.search(r'distance_measure_type\s*=\s*"DOT_PRODUCT_DISTANCE"', index.body)
    assert re.search(r'feature_norm_type\s*=\s*"UNIT_L2_NORM"', index.body)
    assert "dimensions                  = var.wisdom_embedding_dimensions" in index.body
    endpoint = next(
        b for b in all_blocks(MODULE) if b.labels == ("google_vertex_ai_index_endpoint", "wisdom")
    )
    assert "public_endpoint_enabled = true" in endpoint.body


def test_the_ingestion_has_its_own_identity() -> None:
    text = strip_comments(TF.read_text())
    assert 'resource "google_service_account" "ingest"' in text
    assert '"roles/aiplatform.user", "roles/datastore.user"' in text
    assert "roles/iam.serviceAccountTokenCreator" in text

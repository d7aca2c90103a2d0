# Wisdom retrieval (issue 11): a Vertex AI Vector Search index of corpus chunks, a public index
# endpoint and the deployed index the chat service queries with findNeighbors. Why this API
# generation (1.0, not 2.0 collections): crowding and restricts; see
# confidant/wisdom/vector_search.py. Off by default: a deployed index is billed per node hour.
#
# Identities: the chat service account holds roles/aiplatform.user while this is on
# (local.wisdom_roles, iam.tf), which covers findNeighbors (called with its own credentials;
# embeddings go through Vertex AI with use_vertex, else the API key); the ingestion (`confidant-ingest --target vertex`) runs as its own service account, which may
# write the index and its Firestore manifest, and which the principals in wisdom_ingest_members
# may impersonate.

locals {
  wisdom_count       = var.wisdom_vector_search ? 1 : 0
  wisdom_deployed_id = "${replace(var.name_prefix, "-", "_")}_wisdom"

  # Merged into both services' environment (cloud_run.tf): every name is a Settings field.
  wisdom_env = var.wisdom_vector_search ? {
    CONFIDANT_WISDOM                          = "vertex"
    CONFIDANT_EMBEDDINGS                      = "vertex"
    CONFIDANT_EMBEDDING_MODEL                 = var.wisdom_embedding_model
    CONFIDANT_EMBEDDING_DIMENSIONS            = tostring(var.wisdom_embedding_dimensions)
    CONFIDANT_VECTOR_SEARCH_ENDPOINT_DOMAIN   = google_vertex_ai_index_endpoint.wisdom[0].public_endpoint_domain_name
    CONFIDANT_VECTOR_SEARCH_INDEX_ENDPOINT    = google_vertex_ai_index_endpoint.wisdom[0].id
    CONFIDANT_VECTOR_SEARCH_DEPLOYED_INDEX_ID = google_vertex_ai_index_endpoint_deployed_index.wisdom[0].deployed_index_id
    CONFIDANT_VECTOR_SEARCH_INDEX             = google_vertex_ai_index.wisdom[0].id
  } : {}

  ingest_roles = toset(["roles/aiplatform.user", "roles/datastore.user"])
}

resource "google_vertex_ai_index" "wisdom" {
  count = local.wisdom_count

  project      = var.project_id
  region       = var.region
  display_name = "${var.name_prefix}-wisdom"
  description  = "Confidant wisdom passages, chunked and embedded with ${var.wisdom_embedding_model}."
  labels       = var.labels

  # Stream updates: confidant-ingest upserts and removes datapoints directly (no Cloud Storage).
  index_update_method = "STREAM_UPDATE"

  metadata {
    config {
      dimensions                  = var.wisdom_embedding_dimensions
      approximate_neighbors_count = 50
      shard_size                  = "SHARD_SIZE_SMALL"
      # Unit vectors and the dot product: the distance returned is the cosine similarity.
      distance_measure_type = "DOT_PRODUCT_DISTANCE"
      feature_norm_type     = "UNIT_L2_NORM"

      algorithm_config {
        tree_ah_config {
          leaf_node_embedding_count    = 500
          leaf_nodes_to_search_percent = 10
        }
      }
    }
  }

  depends_on = [google_project_service.this]
}

resource "google_vertex_ai_index_endpoint" "wisdom" {
  # checkov:skip=CKV2_GCP_34:A public endpoint domain still requires IAM (roles/aiplatform.user on the chat service account, OAuth on every call); a private endpoint needs VPC peering or Private Service Connect and a Serverless VPC connector on Cloud Run, which this deployment does not create.
  count = local.wisdom_count

  project                 = var.project_id
  region                  = var.region
  display_name            = "${var.name_prefix}-wisdom"
  description             = "Public endpoint the chat service queries (IAM-authenticated)."
  public_endpoint_enabled = true
  labels                  = var.labels

  depends_on = [google_project_service.this]
}

resource "google_vertex_ai_index_endpoint_deployed_index" "wisdom" {
  count = local.wisdom_count

  index_endpoint    = google_vertex_ai_index_endpoint.wisdom[0].id
  deployed_index_id = local.wisdom_deployed_id
  display_name      = "${var.name_prefix}-wisdom"
  index             = google_vertex_ai_index.wisdom[0].id

  automatic_resources {
    min_replica_count = var.wisdom_min_replicas
    max_replica_count = var.wisdom_max_replicas
  }
}

# The ingestion's identity: embeds (Vertex AI), writes the index, keeps the manifest.
resource "google_service_account" "ingest" {
  count = local.wisdom_count

  project      = var.project_id
  account_id   = "${var.name_prefix}-ingest"
  display_name = "Confidant wisdom ingestion (${var.environment})"

  depends_on = [google_project_service.this]
}

resource "google_project_iam_member" "ingest" {
  for_each = var.wisdom_vector_search ? local.ingest_roles : toset([])

  project = var.project_id
  role    = each.value
  member  = "serviceAccount:${google_service_account.ingest[0].email}"
}

# Whoever runs the ingestion (a person, a CI job) does it as the ingestion account.
resource "google_service_account_iam_member" "ingest_impersonators" {
  for_each = var.wisdom_vector_search ? toset(var.wisdom_ingest_members) : toset([])

  service_account_id = google_service_account.ingest[0].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = each.value
}

# The model API key lives in Secret Manager; Terraform creates the secret, never its value:
#   printf %s "$KEY" | gcloud secrets versions add confidant-google-api-key --data-file=-
resource "google_secret_manager_secret" "model_api_key" {
  project   = var.project_id
  secret_id = var.model_api_key_secret_id
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}

# taskflow (issue 12): the Notion integration token, only when a Notion database is configured.
#   printf %s "$TOKEN" | gcloud secrets versions add confidant-notion-token --data-file=-
resource "google_secret_manager_secret" "notion_token" {
  count = var.notion_database_id == null ? 0 : 1

  project   = var.project_id
  secret_id = var.notion_token_secret_id
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}

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

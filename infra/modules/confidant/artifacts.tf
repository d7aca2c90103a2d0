# Artifacts (issue 12): files the agents save per session (taskflow's final task), through
# ADK's GcsArtifactService. Private: only the chat service reads and writes them, and users
# download their own through the API (GET /v1/sessions/{id}/artifacts/...).
resource "google_storage_bucket" "artifacts" {
  project                     = var.project_id
  name                        = coalesce(var.artifacts_bucket, "${var.project_id}-${var.name_prefix}-artifacts")
  location                    = var.region
  labels                      = local.labels
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection

  depends_on = [google_project_service.this]
}

resource "google_storage_bucket_iam_member" "chat_uses_artifacts" {
  bucket = google_storage_bucket.artifacts.name
  role   = "roles/storage.objectUser"
  member = "serviceAccount:${google_service_account.workload["chat"].email}"
}

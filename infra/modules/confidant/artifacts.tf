# Artifacts (issue 12): files the agents save per session (taskflow's final task), through
# ADK's GcsArtifactService. Private: only the chat service reads and writes them, and users
# download their own through the API (GET /v1/sessions/{id}/artifacts/...).
resource "google_storage_bucket" "artifacts" {
  # checkov:skip=CKV_GCP_62:Usage logs need a second bucket; reads and writes are made only by the chat service account and are recorded by Cloud Audit Logs (data access logs for Cloud Storage), which docs/deploy.md enables.
  # checkov:skip=CKV_GCP_78:Object versioning would keep noncurrent copies after DELETE /v1/me erases a user's artifacts; ADK already versions artifacts as separate objects, so erasure must really delete.
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

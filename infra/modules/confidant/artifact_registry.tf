# Where Cloud Build pushes the one Confidant image. Old untagged images are deleted so the
# repository does not grow with every build (the deployed revisions keep their digests).
resource "google_artifact_registry_repository" "images" {
  # checkov:skip=CKV_GCP_84:The image holds code and public dependencies only, no user data or secrets; Google-managed encryption is enough.
  project       = var.project_id
  location      = var.region
  repository_id = var.artifact_repository
  format        = "DOCKER"
  description   = "Confidant container images"
  labels        = local.labels

  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = 10
    }
  }

  cleanup_policies {
    id     = "delete-old"
    action = "DELETE"
    condition {
      older_than = "2592000s" # 30 days
    }
  }

  depends_on = [google_project_service.this]
}

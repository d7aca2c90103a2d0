# Where Cloud Build pushes the one Confidant image.
resource "google_artifact_registry_repository" "images" {
  project       = var.project_id
  location      = var.region
  repository_id = var.artifact_repository
  format        = "DOCKER"
  description   = "Confidant container images"
  labels        = local.labels

  depends_on = [google_project_service.this]
}

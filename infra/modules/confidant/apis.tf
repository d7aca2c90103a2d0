# The Google APIs Confidant uses. Left enabled on destroy: other workloads may share them.
locals {
  apis = toset(concat([
    "artifactregistry.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudscheduler.googleapis.com",
    "cloudtrace.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com",
    "identitytoolkit.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
    ], var.use_vertex ? ["aiplatform.googleapis.com"] : ["generativelanguage.googleapis.com"],
    var.armor_enabled ? ["compute.googleapis.com"] : [],
  ))
}

resource "google_project_service" "this" {
  for_each = local.apis

  project            = var.project_id
  service            = each.value
  disable_on_destroy = false
}

data "google_project" "this" {
  project_id = var.project_id
}

locals {
  labels = merge({ app = "confidant", environment = var.environment }, var.labels)
  # Google-managed agent that delivers push messages and forwards dead letters.
  pubsub_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

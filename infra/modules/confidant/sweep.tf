# The outbox sweep: a small Cloud Run service serving the `sweep` target, called by Cloud
# Scheduler with an OIDC token. It republishes outbox entries still pending after
# CONFIDANT_SWEEP_GRACE_S (a turn whose publish failed), oldest first, CONFIDANT_SWEEP_LIMIT
# per run; a duplicate delivery has no second effect, so republishing is always safe.

resource "google_service_account" "scheduler" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-scheduler"
  display_name = "Confidant outbox sweep scheduler (${var.environment})"

  depends_on = [google_project_service.this]
}

resource "google_cloud_run_v2_service" "sweep" {
  project             = var.project_id
  name                = "${var.name_prefix}-sweep"
  location            = var.region
  ingress             = "INGRESS_TRAFFIC_ALL" # IAM-protected: only the scheduler SA may invoke
  deletion_protection = var.deletion_protection
  labels              = local.labels

  template {
    # Reads the outbox (Firestore) and publishes jobs: the jobs workload's permissions.
    service_account                  = google_service_account.workload["jobs"].email
    max_instance_request_concurrency = 1 # one sweep at a time per instance
    timeout                          = "300s"

    scaling {
      min_instance_count = 0
      max_instance_count = 1
    }

    containers {
      image = var.image

      resources {
        limits = {
          cpu    = "1"
          memory = "1Gi"
        }
        cpu_idle = true
      }

      env {
        name  = "FUNCTION_TARGET"
        value = "sweep"
      }

      dynamic "env" {
        for_each = local.common_env
        content {
          name  = env.key
          value = env.value
        }
      }
    }
  }

  lifecycle {
    ignore_changes = [template[0].containers[0].image, client, client_version]
  }

  depends_on = [google_project_service.this]
}

resource "google_cloud_run_v2_service_iam_member" "scheduler_invokes_sweep" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_service.sweep.name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.scheduler.email}"
}

resource "google_pubsub_topic_iam_member" "jobs_republishes" {
  for_each = google_pubsub_topic.jobs

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${google_service_account.workload["jobs"].email}"
}

resource "google_cloud_scheduler_job" "sweep" {
  project          = var.project_id
  region           = var.region
  name             = "${var.name_prefix}-outbox-sweep"
  description      = "Republish post-turn jobs whose publish failed (the outbox sweep)."
  schedule         = var.sweep_schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "320s"

  retry_config {
    retry_count = 0 # the next scheduled run is the retry
  }

  http_target {
    http_method = "POST"
    uri         = google_cloud_run_v2_service.sweep.uri

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloud_run_v2_service.sweep.uri
    }
  }

  depends_on = [google_project_service.this]
}

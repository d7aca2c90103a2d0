# The outbox sweep: Cloud Scheduler calls the sweep service, which republishes job records a
# turn committed but could not publish (oldest first, bounded per run).
resource "google_cloud_scheduler_job" "sweep" {
  project          = var.project_id
  region           = var.region
  name             = "${var.name_prefix}-sweep"
  description      = "Republish unpublished post-turn jobs (outbox sweep)"
  schedule         = var.sweep_schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "${var.sweep_timeout_s}s"

  retry_config {
    retry_count = 0 # the next run sweeps again
  }

  http_target {
    http_method = "POST"
    uri         = google_cloud_run_v2_service.service["sweep"].uri

    oidc_token {
      service_account_email = google_service_account.invoker["scheduler"].email
      audience              = google_cloud_run_v2_service.service["sweep"].uri
    }
  }

  depends_on = [google_project_service.this]
}

# Job topics: one per kind, named "<topic_prefix>-<kind>" exactly as confidant.jobs.topic_id()
# does. Each has a push subscription to the jobs service (OIDC-authenticated), a retry policy,
# and a dead-letter topic for poison messages.

resource "google_pubsub_topic" "jobs" {
  for_each = toset(var.job_kinds)

  project = var.project_id
  name    = "${var.topic_prefix}-${each.key}"
  labels  = local.labels

  depends_on = [google_project_service.this]
}

resource "google_pubsub_topic" "dead_letter" {
  project = var.project_id
  name    = "${var.topic_prefix}-dead-letter"
  labels  = local.labels

  depends_on = [google_project_service.this]
}

# A topic without subscriptions drops messages: keep dead letters for inspection and replay.
resource "google_pubsub_subscription" "dead_letter" {
  project                    = var.project_id
  name                       = "${var.topic_prefix}-dead-letter"
  topic                      = google_pubsub_topic.dead_letter.id
  message_retention_duration = "604800s" # 7 days, the maximum
  ack_deadline_seconds       = 60
  labels                     = local.labels

  expiration_policy {
    ttl = "" # never expire
  }
}

resource "google_pubsub_subscription" "jobs" {
  for_each = google_pubsub_topic.jobs

  project                    = var.project_id
  name                       = "${each.value.name}-push"
  topic                      = each.value.id
  ack_deadline_seconds       = var.job_ack_deadline_s
  message_retention_duration = "604800s"
  labels                     = local.labels

  push_config {
    # The handler dispatches on the JobRecord's kind; the path only makes logs readable.
    push_endpoint = "${google_cloud_run_v2_service.jobs.uri}/jobs/${each.key}"

    oidc_token {
      service_account_email = google_service_account.push.email
      audience              = google_cloud_run_v2_service.jobs.uri
    }
  }

  retry_policy {
    minimum_backoff = var.job_retry_min_backoff
    maximum_backoff = var.job_retry_max_backoff
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter.id
    max_delivery_attempts = var.job_max_delivery_attempts
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [google_service_account_iam_member.agent_signs_as_push]
}

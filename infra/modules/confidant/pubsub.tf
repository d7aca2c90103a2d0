# Job topics: one per kind, named "<topic_prefix>-<kind>" exactly as confidant.jobs.topic_id()
# does, so each kind gets its own push subscription, retry policy, dead-letter topic and alert.
# Each kind's push subscription delivers to the jobs service (OIDC-authenticated); messages that
# fail max_delivery_attempts times go to "<topic>-dead-letter", kept for inspection and replay.

locals {
  job_kinds = toset(var.job_kinds)
}

resource "google_pubsub_topic" "jobs" {
  # checkov:skip=CKV_GCP_83:Google-managed encryption at rest; job messages are short-lived (7-day retention) and a CMEK key ring adds cost and a key-destruction failure mode for no gain here.
  for_each = local.job_kinds

  project = var.project_id
  name    = "${var.topic_prefix}-${each.key}"
  labels  = local.labels

  depends_on = [google_project_service.this]
}

resource "google_pubsub_topic" "dead_letter" {
  # checkov:skip=CKV_GCP_83:Google-managed encryption at rest; job messages are short-lived (7-day retention) and a CMEK key ring adds cost and a key-destruction failure mode for no gain here.
  for_each = local.job_kinds

  project = var.project_id
  name    = "${var.topic_prefix}-${each.key}-dead-letter"
  labels  = local.labels

  depends_on = [google_project_service.this]
}

# A topic without subscriptions drops messages: keep dead letters to inspect and replay
# (docs/deploy.md shows how).
resource "google_pubsub_subscription" "dead_letter" {
  for_each = local.job_kinds

  project                    = var.project_id
  name                       = "${var.topic_prefix}-${each.key}-dead-letter-inspect"
  topic                      = google_pubsub_topic.dead_letter[each.key].id
  message_retention_duration = "604800s" # 7 days, the maximum
  retain_acked_messages      = true
  ack_deadline_seconds       = 60
  labels                     = local.labels

  expiration_policy {
    ttl = "" # never expire
  }
}

resource "google_pubsub_subscription" "jobs" {
  for_each = local.job_kinds

  project                    = var.project_id
  name                       = "${var.topic_prefix}-${each.key}-push"
  topic                      = google_pubsub_topic.jobs[each.key].id
  ack_deadline_seconds       = var.job_ack_deadline_s
  message_retention_duration = "604800s"
  labels                     = local.labels

  push_config {
    # The handler dispatches on the job's kind; the path only makes request logs readable.
    push_endpoint = "${google_cloud_run_v2_service.service["jobs"].uri}/jobs/${each.key}"

    oidc_token {
      service_account_email = google_service_account.invoker["push"].email
      audience              = google_cloud_run_v2_service.service["jobs"].uri
    }
  }

  # Exponential backoff between redeliveries of a failed (non-2xx) push.
  retry_policy {
    minimum_backoff = var.job_retry_min_backoff
    maximum_backoff = var.job_retry_max_backoff
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter[each.key].id
    max_delivery_attempts = var.job_max_delivery_attempts
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [google_service_account_iam_member.agent_signs_as_push]
}

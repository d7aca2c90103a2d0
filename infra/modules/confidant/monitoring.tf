# Alerts: the chat service's 5xx rate (from its request logs), its failed replies inside 200
# streams (from its own log lines) and any message reaching a dead-letter topic. Notification channels are created outside this module (e-mail, chat, pager)
# and passed in by id; with none, incidents still open in Cloud Monitoring.

# Log-based metrics over Cloud Run's request log of the chat service: all requests and 5xx.
resource "google_logging_metric" "chat_requests" {
  for_each = {
    requests = ""
    "5xx"    = " AND httpRequest.status>=500"
  }

  project = var.project_id
  name    = "${var.name_prefix}-chat-${each.key}"
  filter  = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${google_cloud_run_v2_service.service["chat"].name}\" AND log_id(\"run.googleapis.com/requests\")${each.value}"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }
}

# A reply that fails after its stream began ends with an `error` part in a 200 response, which
# the request log's status never shows. The chat service writes one structured line for each
# (confidant/observability/stream_errors.py, STREAM_ERROR_EVENT), from a failed turn and from a
# resumed stream whose turn died: severity ERROR when the failure is the server's (what would
# have been a 5xx before the stream), with its stable code.
resource "google_logging_metric" "chat_stream_errors" {
  project = var.project_id
  name    = "${var.name_prefix}-chat-stream-errors"
  filter  = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${google_cloud_run_v2_service.service["chat"].name}\" AND jsonPayload.event=\"chat_stream_error\" AND severity>=ERROR"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
    labels {
      key         = "error_code"
      value_type  = "STRING"
      description = "the error part's code, e.g. model_unavailable, commit_outcome_unknown, reply_interrupted"
    }
  }
  label_extractors = {
    error_code = "EXTRACT(jsonPayload.error_code)"
  }
}

# Two alerts on the share of chat requests that failed over 5 minutes: by the request log's
# 5xx, and by the chat service's own line for a reply that failed inside a 200 stream.
resource "google_monitoring_alert_policy" "chat_failure_ratio" {
  for_each = {
    "5xx_rate" = {
      title     = "5xx rate above ${var.chat_5xx_alert_ratio * 100}%"
      condition = "chat 5xx / all requests over 5 minutes"
      metric    = google_logging_metric.chat_requests["5xx"].name
      content   = "The chat service answered more than ${var.chat_5xx_alert_ratio * 100}% of requests with 5xx. Check its logs and consider rolling back (docs/deploy.md, Roll back)."
    }
    stream_errors = {
      title     = "failed replies above ${var.chat_5xx_alert_ratio * 100}%"
      condition = "replies ended by a server error part / all requests over 5 minutes"
      metric    = google_logging_metric.chat_stream_errors.name
      content   = "More than ${var.chat_5xx_alert_ratio * 100}% of chat requests ended their reply with a server error after the stream began (an `error` part; the request log says 200). The metric's `error_code` label says which (e.g. `model_unavailable`: the model provider; `commit_outcome_unknown`: Firestore; `reply_interrupted` / `reply_interrupted_saved`: an instance died mid-reply, seen by the client's resumed stream). Check the service's log lines with `jsonPayload.event=\"chat_stream_error\"` and consider rolling back (docs/deploy.md, Roll back)."
    }
  }

  project               = var.project_id
  display_name          = "${var.name_prefix}-chat: ${each.value.title}"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = each.value.condition
    condition_threshold {
      filter             = "resource.type=\"cloud_run_revision\" AND metric.type=\"logging.googleapis.com/user/${each.value.metric}\""
      denominator_filter = "resource.type=\"cloud_run_revision\" AND metric.type=\"logging.googleapis.com/user/${google_logging_metric.chat_requests["requests"].name}\""
      comparison         = "COMPARISON_GT"
      threshold_value    = var.chat_5xx_alert_ratio
      duration           = "300s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
      }
      denominator_aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    content   = each.value.content
    mime_type = "text/markdown"
  }
}

# The two alerts had a resource each: same policies, kept in place.
moved {
  from = google_monitoring_alert_policy.chat_5xx_rate
  to   = google_monitoring_alert_policy.chat_failure_ratio["5xx_rate"]
}

moved {
  from = google_monitoring_alert_policy.chat_stream_errors
  to   = google_monitoring_alert_policy.chat_failure_ratio["stream_errors"]
}

resource "google_monitoring_alert_policy" "dead_letters" {
  project               = var.project_id
  display_name          = "${var.name_prefix}: job messages dead-lettered"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "messages published to a dead-letter topic"
    condition_threshold {
      filter          = "resource.type=\"pubsub_topic\" AND metric.type=\"pubsub.googleapis.com/topic/send_message_operation_count\" AND resource.labels.topic_id=monitoring.regex.full_match(\"${var.topic_prefix}-.*-dead-letter\")"
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "60s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.label.topic_id"]
      }
    }
  }

  documentation {
    content   = "A post-turn job failed ${var.job_max_delivery_attempts} deliveries and was dead-lettered. Pull it from the topic's -inspect subscription (docs/deploy.md, Dead letters)."
    mime_type = "text/markdown"
  }

  depends_on = [google_pubsub_topic.dead_letter]
}

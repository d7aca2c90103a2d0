# Two Cloud Run services from one image: functions-framework serves the target named by
# FUNCTION_TARGET (the Dockerfile defaults to "chat"; functions/main.py defines the targets).

locals {
  # Read by confidant.settings.Settings (env prefix CONFIDANT_); every name must be a field there.
  common_env = merge({
    CONFIDANT_STORE               = "firestore"
    CONFIDANT_JOBS                = "pubsub"
    CONFIDANT_AUTH                = "firebase"
    CONFIDANT_MODEL               = var.model
    CONFIDANT_PROJECT_ID          = var.project_id
    CONFIDANT_FIREBASE_PROJECT_ID = coalesce(var.firebase_project_id, var.project_id)
    CONFIDANT_FIRESTORE_DATABASE  = var.firestore_database
    CONFIDANT_PUBSUB_TOPIC_PREFIX = var.topic_prefix
    CONFIDANT_GEMINI_MODEL        = var.gemini_model
    GOOGLE_CLOUD_PROJECT          = var.project_id
  }, local.wisdom_env, var.extra_env)
}

resource "google_cloud_run_v2_service" "chat" {
  project             = var.project_id
  name                = "${var.name_prefix}-chat"
  location            = var.region
  ingress             = "INGRESS_TRAFFIC_ALL"
  deletion_protection = var.deletion_protection
  labels              = local.labels

  template {
    service_account                  = google_service_account.workload["chat"].email
    max_instance_request_concurrency = var.chat_concurrency
    timeout                          = "${var.chat_timeout_s}s"

    scaling {
      min_instance_count = var.chat_min_instances
      max_instance_count = var.chat_max_instances
    }

    containers {
      image = var.image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = var.chat_cpu
          memory = var.chat_memory
        }
        # Jobs are published before the stream closes, inside the request, so
        # request-time CPU is enough.
        cpu_idle          = true
        startup_cpu_boost = true # cold import of ADK + cloud clients is CPU-bound
      }

      env {
        name  = "FUNCTION_TARGET"
        value = "chat"
      }

      dynamic "env" {
        for_each = local.common_env
        content {
          name  = env.key
          value = env.value
        }
      }

      env {
        name = "GOOGLE_API_KEY"
        value_source {
          secret_key_ref {
            secret  = google_secret_manager_secret.model_api_key.secret_id
            version = "latest"
          }
        }
      }

      # /healthz builds the runtime and runs the warm-up turn, so traffic arrives warm.
      startup_probe {
        http_get {
          path = "/healthz"
          port = 8080
        }
        initial_delay_seconds = 0
        period_seconds        = 2
        failure_threshold     = 30
      }
    }
  }

  lifecycle {
    # cloudbuild.yaml rolls out new images with `gcloud run deploy`; Terraform owns the rest.
    ignore_changes = [template[0].containers[0].image, client, client_version]
  }

  depends_on = [
    google_project_service.this,
    google_secret_manager_secret_iam_member.workload_reads_model_key,
  ]
}

resource "google_cloud_run_v2_service" "jobs" {
  project             = var.project_id
  name                = "${var.name_prefix}-jobs"
  location            = var.region
  ingress             = "INGRESS_TRAFFIC_ALL" # IAM-protected: only the push SA may invoke
  deletion_protection = var.deletion_protection
  labels              = local.labels

  template {
    service_account                  = google_service_account.workload["jobs"].email
    max_instance_request_concurrency = var.jobs_concurrency
    # A push must be answered within the subscription's ack deadline.
    timeout = "${var.job_ack_deadline_s}s"

    scaling {
      min_instance_count = var.jobs_min_instances
      max_instance_count = var.jobs_max_instances
    }

    containers {
      image = var.image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = var.jobs_cpu
          memory = var.jobs_memory
        }
        cpu_idle = true
      }

      env {
        name  = "FUNCTION_TARGET"
        value = "jobs"
      }

      dynamic "env" {
        for_each = local.common_env
        content {
          name  = env.key
          value = env.value
        }
      }

      env {
        name = "GOOGLE_API_KEY"
        value_source {
          secret_key_ref {
            secret  = google_secret_manager_secret.model_api_key.secret_id
            version = "latest"
          }
        }
      }
    }
  }

  lifecycle {
    ignore_changes = [template[0].containers[0].image, client, client_version]
  }

  depends_on = [
    google_project_service.this,
    google_secret_manager_secret_iam_member.workload_reads_model_key,
  ]
}

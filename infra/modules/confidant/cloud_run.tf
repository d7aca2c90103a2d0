# Three Cloud Run services from one image: functions-framework serves the target named by
# FUNCTION_TARGET (functions/main.py defines the targets; tests/infra/test_drift.py checks that
# every target deployed here exists there). Keys of local.services are the workloads: each runs
# as its own service account.

locals {
  # Read by confidant.settings.Settings (env prefix CONFIDANT_) in every service; the drift test
  # checks that each name is a setting and that the result validates as a cloud deployment.
  common_env = merge(
    {
      CONFIDANT_STORE               = "firestore"
      CONFIDANT_JOBS                = "pubsub"
      CONFIDANT_AUTH                = "firebase"
      CONFIDANT_WISDOM              = "local"
      CONFIDANT_MODEL               = var.model
      CONFIDANT_PROJECT_ID          = var.project_id
      CONFIDANT_FIREBASE_PROJECT_ID = coalesce(var.firebase_project_id, var.project_id)
      CONFIDANT_FIRESTORE_DATABASE  = google_firestore_database.main.name
      CONFIDANT_PUBSUB_TOPIC_PREFIX = var.topic_prefix
      CONFIDANT_GEMINI_MODEL        = var.gemini_model
      CONFIDANT_BUSY_POLICY         = var.busy_policy
      CONFIDANT_CRISIS_CLASSIFIER   = var.crisis_classifier
      CONFIDANT_CORS_ORIGINS        = jsonencode(var.cors_origins)
      CONFIDANT_TRACE_EXPORTER      = "cloudtrace"
      CONFIDANT_LOG_FORMAT          = "json"
      # The client's address in X-Forwarded-For: the right-most entry, or the one before the
      # load balancer's own when Cloud Armor's load balancer is in front (armor.tf).
      CONFIDANT_FORWARDED_HOPS = var.armor_enabled ? "2" : "1"
      GOOGLE_CLOUD_PROJECT     = var.project_id
      # taskflow (issue 12): Notion as the task system when a database is configured; artifacts.
      CONFIDANT_TASKS            = var.notion_database_id == null ? "local" : "notion"
      CONFIDANT_ARTIFACTS_BUCKET = google_storage_bucket.artifacts.name
    },
    # Vertex AI: the service account's identity, no key to keep; else the Gemini API key below.
    var.use_vertex ? { GOOGLE_GENAI_USE_VERTEXAI = "true", GOOGLE_CLOUD_LOCATION = var.vertex_location } : {},
    var.notion_database_id == null ? {} : { CONFIDANT_NOTION_DATABASE_ID = var.notion_database_id },
    # Wisdom on Vertex AI Vector Search when it is deployed (vector_search.tf); else local.
    local.wisdom_env,
    var.extra_env,
  )

  # Environment variables read from Secret Manager (env name => secret id); values never in state.
  secret_env = var.use_vertex ? {} : { GOOGLE_API_KEY = var.model_api_key_secret_id }

  services = {
    chat = {
      # Apps call it directly with a Firebase ID token, verified in-app (CONFIDANT_AUTH=firebase);
      # with Cloud Armor (armor.tf) only through its load balancer, so nothing bypasses it.
      ingress     = var.armor_enabled ? "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER" : "INGRESS_TRAFFIC_ALL"
      public      = var.chat_public
      min         = var.chat_min_instances
      max         = var.chat_max_instances
      concurrency = var.chat_concurrency
      cpu         = var.chat_cpu
      memory      = var.chat_memory
      timeout_s   = var.chat_timeout_s
      # CPU stays allocated outside requests: a turn whose client hung up runs on in its own
      # task and commits (and publishes its jobs) after the response has ended.
      cpu_idle     = false
      model        = true
      wisdom       = true # retrieve_wisdom runs in the turn (Vector Search when deployed)
      health_check = true
    }
    jobs = {
      # Pub/Sub push from this project counts as internal traffic; IAM allows only the push SA.
      ingress      = "INGRESS_TRAFFIC_INTERNAL_ONLY"
      public       = false
      min          = 0
      max          = var.jobs_max_instances
      concurrency  = var.jobs_concurrency
      cpu          = "1"
      memory       = var.jobs_memory
      timeout_s    = var.job_ack_deadline_s # a push is answered within the ack deadline
      cpu_idle     = true
      model        = true
      wisdom       = false
      health_check = false
    }
    sweep = {
      # Called by Cloud Scheduler (internal traffic) to republish unpublished outbox entries.
      ingress      = "INGRESS_TRAFFIC_INTERNAL_ONLY"
      public       = false
      min          = 0
      max          = 1
      concurrency  = 1
      cpu          = "1"
      memory       = "512Mi"
      timeout_s    = var.sweep_timeout_s
      cpu_idle     = true
      model        = false
      wisdom       = false
      health_check = false
    }
  }
}

resource "google_cloud_run_v2_service" "service" {
  for_each = local.services

  project             = var.project_id
  name                = "${var.name_prefix}-${each.key}"
  location            = var.region
  ingress             = each.value.ingress
  deletion_protection = var.deletion_protection
  # Public chat without an allUsers IAM binding (which domain-restricted-sharing policies refuse).
  invoker_iam_disabled = each.value.public
  labels               = local.labels

  template {
    service_account                  = google_service_account.workload[each.key].email
    max_instance_request_concurrency = each.value.concurrency
    timeout                          = "${each.value.timeout_s}s"

    scaling {
      min_instance_count = each.value.min
      max_instance_count = each.value.max
    }

    containers {
      image = var.image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = each.value.cpu
          memory = each.value.memory
        }
        cpu_idle          = each.value.cpu_idle
        startup_cpu_boost = true # the cold import of ADK and the cloud clients is CPU-bound
      }

      env {
        name  = "FUNCTION_TARGET"
        value = each.key
      }

      dynamic "env" {
        for_each = local.common_env
        content {
          name  = env.key
          value = env.value
        }
      }

      dynamic "env" {
        for_each = each.value.model ? local.secret_env : {}
        content {
          name = env.key
          value_source {
            secret_key_ref {
              secret  = google_secret_manager_secret.env[env.key].secret_id
              version = "latest"
            }
          }
        }
      }

      # taskflow (issue 12): only the chat service writes tasks, so only it reads the token.
      dynamic "env" {
        for_each = each.key == "chat" ? google_secret_manager_secret.notion_token : []
        content {
          name = "CONFIDANT_NOTION_TOKEN"
          value_source {
            secret_key_ref {
              secret  = env.value.secret_id
              version = "latest"
            }
          }
        }
      }

      # /healthz builds the runtime and runs the warm-up turn, so traffic arrives warm.
      dynamic "startup_probe" {
        for_each = each.value.health_check ? [1] : []
        content {
          initial_delay_seconds = 0
          period_seconds        = 2
          failure_threshold     = 30
          http_get {
            path = "/healthz"
            port = 8080
          }
        }
      }
    }
  }

  lifecycle {
    # cloudbuild.yaml deploys images by digest and rolls traffic back on a failed smoke test;
    # Terraform owns everything else.
    ignore_changes = [template[0].containers[0].image, traffic, client, client_version]
  }

  depends_on = [
    google_project_service.this,
    google_secret_manager_secret_iam_member.workload_reads,
    google_secret_manager_secret_iam_member.chat_reads_notion_token,
  ]
}

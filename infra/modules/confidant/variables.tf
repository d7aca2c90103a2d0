# Inputs of the Confidant module. Only project_id, environment and image are required.

variable "project_id" {
  description = "Google Cloud project that hosts Confidant."
  type        = string
}

variable "region" {
  description = "Region of the Cloud Run services and the Artifact Registry repository."
  type        = string
  default     = "us-central1"
}

variable "environment" {
  description = "Environment name (dev, staging, prod); used in labels."
  type        = string
}

variable "name_prefix" {
  description = "Prefix of service, service account and repository names."
  type        = string
  default     = "confidant"
}

variable "image" {
  description = "Container image (built from the repo's Dockerfile) for the chat and jobs services."
  type        = string
}

variable "artifact_repository" {
  description = "Artifact Registry Docker repository that Cloud Build pushes the image to."
  type        = string
  default     = "confidant"
}

variable "firebase_project_id" {
  description = "Firebase / Identity Platform project whose ID tokens are accepted; null = project_id."
  type        = string
  default     = null
}

# --- Firestore -----------------------------------------------------------------------------

variable "firestore_database" {
  description = "Firestore database id."
  type        = string
  default     = "(default)"
}

variable "firestore_location" {
  description = "Firestore location (multi-region nam5/eur3 or a region)."
  type        = string
  default     = "nam5"
}

variable "firestore_pitr" {
  description = "Point-in-time recovery (7 days of versions) on the Firestore database."
  type        = bool
  default     = true
}

variable "firestore_unindexed_fields" {
  description = "Large JSON fields exempt from single-field indexes (collection group + field)."
  type = list(object({
    collection = string
    field      = string
  }))
  # Matches confidant/sessions/firestore_store.py: JSON-encoded state and event chunks.
  default = [
    { collection = "sessions", field = "state" },
    { collection = "sessions", field = "tail" },
    { collection = "apps", field = "state" },
    { collection = "chunks", field = "events" },
    { collection = "app_states", field = "state" },
    { collection = "jobs", field = "payload" },
    { collection = "jobs", field = "job" },
    { collection = "job_failures", field = "body" },
    # The agent registry (confidant/agentconfig): configs are read by id, never queried by
    # content; versions are listed by `version` only (single-field, no composite index).
    { collection = "agent_configs", field = "config" },
    { collection = "versions", field = "config" },
    # Resumable streams: a batch's encoded parts are read by document, never queried.
    { collection = "stream_parts", field = "parts" },
  ]
}

# --- Jobs (Pub/Sub) ------------------------------------------------------------------------

variable "job_kinds" {
  description = "Post-turn job kinds; each gets topic \"<topic_prefix>-<kind>\" and a push subscription."
  type        = list(string)
  default     = ["emotion", "summary", "memory", "profile_proposal"]

  validation {
    condition     = alltrue([for kind in var.job_kinds : can(regex("^[a-z][a-z0-9_-]{0,62}$", kind))])
    error_message = "Job kinds must match ^[a-z][a-z0-9_-]*$ (the same rule as confidant.jobs.topic_id)."
  }
}

variable "topic_prefix" {
  description = "Pub/Sub topic prefix; must equal CONFIDANT_PUBSUB_TOPIC_PREFIX of the services."
  type        = string
  default     = "confidant"
}

variable "job_ack_deadline_s" {
  description = "Seconds a job handler has to answer a push before Pub/Sub redelivers (10-600); keep it above CONFIDANT_JOB_DEADLINE_S (50)."
  type        = number
  default     = 300
  validation {
    condition     = var.job_ack_deadline_s >= 10 && var.job_ack_deadline_s <= 600
    error_message = "Pub/Sub accepts an ack deadline of 10 to 600 seconds."
  }
}

variable "job_max_delivery_attempts" {
  description = "Deliveries before a job message goes to the dead-letter topic (5-100)."
  type        = number
  default     = 5
  validation {
    condition     = var.job_max_delivery_attempts >= 5 && var.job_max_delivery_attempts <= 100
    error_message = "Pub/Sub accepts 5 to 100 delivery attempts before dead-lettering."
  }
}

variable "job_retry_min_backoff" {
  description = "Minimum delay before redelivering a failed job."
  type        = string
  default     = "10s"
}

variable "job_retry_max_backoff" {
  description = "Maximum delay before redelivering a failed job."
  type        = string
  default     = "600s"
}

variable "sweep_schedule" {
  description = "Cron schedule (UTC) of the outbox sweep that republishes unpublished jobs."
  type        = string
  default     = "*/5 * * * *"
}

variable "sweep_timeout_s" {
  description = "Request timeout of the sweep service and Cloud Scheduler's attempt deadline."
  type        = number
  default     = 120
}

# --- Cloud Run -----------------------------------------------------------------------------

variable "chat_public" {
  description = "Anyone may reach the chat service (apps send Firebase ID tokens, verified in-app); false = IAM invokers only."
  type        = bool
  default     = true
}

variable "chat_min_instances" {
  description = "Warm chat instances: 0 scales to zero (a cold start costs seconds, bench/cold_start.py), 1 keeps one warm."
  type        = number
  default     = 0
}

variable "chat_max_instances" {
  type    = number
  default = 10
}

variable "chat_concurrency" {
  description = "Concurrent requests per chat instance (turns mostly wait on the model)."
  type        = number
  default     = 40
}

variable "chat_cpu" {
  type    = string
  default = "1"
}

variable "chat_memory" {
  type    = string
  default = "1Gi"
}

variable "chat_timeout_s" {
  description = "Request timeout of the chat service; bounds one streamed turn (model calls, tools, retries)."
  type        = number
  default     = 900
}

variable "jobs_max_instances" {
  type    = number
  default = 5
}

variable "jobs_concurrency" {
  type    = number
  default = 10
}

variable "jobs_memory" {
  type    = string
  default = "1Gi"
}

# --- Models and configuration ---------------------------------------------------------------

variable "model" {
  description = "CONFIDANT_MODEL: auto, gemini or litellm."
  type        = string
  default     = "gemini"
}

variable "gemini_model" {
  type    = string
  default = "gemini-2.5-flash"
}

variable "use_vertex" {
  description = "Call Gemini through Vertex AI as the service account (no key); false = Gemini API key from Secret Manager."
  type        = bool
  default     = false
}

variable "vertex_location" {
  description = "Vertex AI location when use_vertex is true."
  type        = string
  default     = "us-central1"
}

variable "model_api_key_secret_id" {
  description = "Secret Manager secret holding GOOGLE_API_KEY when use_vertex is false (add versions out of band; never in state)."
  type        = string
  default     = "confidant-google-api-key"
}

variable "busy_policy" {
  description = "CONFIDANT_BUSY_POLICY: a message on a busy session: reject (409), wait, interrupt or enqueue."
  type        = string
  default     = "reject"
  validation {
    condition     = contains(["reject", "wait", "interrupt", "enqueue"], var.busy_policy)
    error_message = "busy_policy must be reject, wait, interrupt or enqueue."
  }
}

variable "cors_origins" {
  description = "CONFIDANT_CORS_ORIGINS: browser origins allowed to call the chat API (e.g. [\"https://app.example\"])."
  type        = list(string)
  default     = []
}

variable "extra_env" {
  description = "Additional environment variables for every service (e.g. CONFIDANT_WINDOW_EVENTS)."
  type        = map(string)
  default     = {}
}

# --- IAM and alerts -------------------------------------------------------------------------

variable "workload_roles" {
  description = "Project roles per workload service account (Vertex AI is added when use_vertex)."
  type        = map(list(string))
  default = {
    chat  = ["roles/datastore.user", "roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/cloudtrace.agent"]
    jobs  = ["roles/datastore.user", "roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/cloudtrace.agent"]
    sweep = ["roles/datastore.user", "roles/logging.logWriter"]
  }
}

variable "deployer_member" {
  description = "Principal that deploys new images (e.g. the Cloud Build service account as \"serviceAccount:...\"); null = none."
  type        = string
  default     = null
}

variable "alert_notification_channels" {
  description = "Cloud Monitoring notification channel ids for the alerts (projects/<p>/notificationChannels/<id>)."
  type        = list(string)
  default     = []
}

variable "chat_5xx_alert_ratio" {
  description = "Alert when this fraction of chat requests over 5 minutes are 5xx, and (a second alert) when this fraction end their reply with a server error after the stream began."
  type        = number
  default     = 0.05
}

variable "deletion_protection" {
  description = "Protect the Cloud Run services and the Firestore database from terraform destroy."
  type        = bool
  default     = true
}

variable "labels" {
  type    = map(string)
  default = {}
}

# --- taskflow (issue 12) ----------------------------------------------------------------------

variable "notion_database_id" {
  description = "Notion database taskflow writes tasks to; null keeps tasks in the embedded writer (no Notion)."
  type        = string
  default     = null
}

variable "notion_token_secret_id" {
  description = "Secret Manager secret holding the Notion integration token (versions added out of band)."
  type        = string
  default     = "confidant-notion-token"
}

variable "artifacts_bucket" {
  description = "Cloud Storage bucket for agent artifacts; null names it <project>-<prefix>-artifacts."
  type        = string
  default     = null
}

variable "crisis_classifier" {
  description = "Run the crisis guard's model classifier (a short non-streaming call, 1.5 s cap) when the lexicon is silent. On by default in the cloud, where a real model is configured."
  type        = bool
  default     = true
}

# --- Wisdom retrieval (Vertex AI Vector Search) ---------------------------------------------

variable "wisdom_vector_search" {
  description = "Create the wisdom index, endpoint and deployed index, and point the services at them (billed per node hour)."
  type        = bool
  default     = false
}

variable "wisdom_embedding_model" {
  description = "CONFIDANT_EMBEDDING_MODEL: the embedding model of the index (ingestion and queries must agree)."
  type        = string
  default     = "gemini-embedding-001"
}

variable "wisdom_embedding_dimensions" {
  description = "CONFIDANT_EMBEDDING_DIMENSIONS: vector size of the index."
  type        = number
  default     = 768
}

variable "wisdom_min_replicas" {
  type    = number
  default = 1
}

variable "wisdom_max_replicas" {
  type    = number
  default = 2
}

variable "wisdom_ingest_members" {
  description = "Principals allowed to run the ingestion as its service account (e.g. \"user:you@example.com\")."
  type        = list(string)
  default     = []
}

# Cloud Armor (armor.tf, issue 14): a load balancer with a per-IP rate limit before the chat service.
variable "armor_enabled" {
  description = "Put the chat service behind an external Application Load Balancer with a Cloud Armor per-IP rate limit (needs armor_domain)."
  type        = bool
  default     = false
}

variable "armor_domain" {
  description = "The domain the apps call when armor_enabled (the load balancer's managed certificate)."
  type        = string
  default     = null
}

variable "armor_rate_limit_count" {
  description = "Requests per client IP per armor_rate_limit_interval_s before Cloud Armor answers 429."
  type        = number
  default     = 600
}

variable "armor_rate_limit_interval_s" {
  description = "The rate limit's interval (Cloud Armor accepts 10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700 or 3600)."
  type        = number
  default     = 60
}

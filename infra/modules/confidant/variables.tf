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
    # The agent registry (confidant/agentconfig): configs are read by id, never queried by
    # content; versions are listed by `version` only (single-field, no composite index).
    { collection = "agent_configs", field = "config" },
    { collection = "versions", field = "config" },
  ]
}

# --- Jobs (Pub/Sub) ------------------------------------------------------------------------

variable "job_kinds" {
  description = "Post-turn job kinds; each gets topic \"<topic_prefix>-<kind>\" and a push subscription."
  type        = list(string)
  default     = ["emotion", "summary"]

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
  description = "Seconds a job handler has to answer a push before Pub/Sub redelivers (10-600)."
  type        = number
  default     = 300
}

variable "job_max_delivery_attempts" {
  description = "Deliveries before a job message goes to the dead-letter topic (5-100)."
  type        = number
  default     = 5
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

# --- Cloud Run -----------------------------------------------------------------------------

variable "chat_public" {
  description = "Allow unauthenticated invocations of the chat service (apps send Firebase ID tokens, verified in-app)."
  type        = bool
  default     = true
}

variable "chat_min_instances" {
  description = "Warm chat instances (cold start ≈1-2 s with ADK and the cloud clients)."
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
  description = "Request timeout of the chat service; bounds one streamed turn."
  type        = number
  default     = 300
}

variable "jobs_min_instances" {
  type    = number
  default = 0
}

variable "jobs_max_instances" {
  type    = number
  default = 5
}

variable "jobs_concurrency" {
  type    = number
  default = 10
}

variable "jobs_cpu" {
  type    = string
  default = "1"
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

variable "model_api_key_secret_id" {
  description = "Secret Manager secret holding GOOGLE_API_KEY (add versions out of band; never in state)."
  type        = string
  default     = "confidant-google-api-key"
}

variable "extra_env" {
  description = "Additional environment variables for both services (e.g. CONFIDANT_BUSY_POLICY)."
  type        = map(string)
  default     = {}
}

# --- IAM ------------------------------------------------------------------------------------

variable "chat_roles" {
  description = "Project roles of the chat service account."
  type        = list(string)
  default = [
    "roles/datastore.user",
    "roles/aiplatform.user",
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/cloudtrace.agent",
  ]
}

variable "jobs_roles" {
  description = "Project roles of the jobs service account."
  type        = list(string)
  default = [
    "roles/datastore.user",
    "roles/aiplatform.user",
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/cloudtrace.agent",
  ]
}

variable "deployer_member" {
  description = "Principal that deploys new images (e.g. the Cloud Build service account as \"serviceAccount:...\"); null = none."
  type        = string
  default     = null
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

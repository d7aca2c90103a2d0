output "chat_url" {
  description = "HTTPS URL of the chat service."
  value       = google_cloud_run_v2_service.chat.uri
}

output "jobs_url" {
  description = "HTTPS URL of the jobs service (push target; not publicly invocable)."
  value       = google_cloud_run_v2_service.jobs.uri
}

output "service_accounts" {
  description = "Service account emails by workload (chat, jobs) plus the push invoker."
  value = merge(
    { for workload, account in google_service_account.workload : workload => account.email },
    { push = google_service_account.push.email },
  )
}

output "job_topics" {
  description = "Job topic ids by kind."
  value       = { for kind, topic in google_pubsub_topic.jobs : kind => topic.name }
}

output "dead_letter_topic" {
  value = google_pubsub_topic.dead_letter.name
}

output "firestore_database" {
  value = google_firestore_database.main.name
}

output "image_repository" {
  description = "Docker repository for the Confidant image (<region>-docker.pkg.dev/<project>/<repo>)."
  value       = "${var.region}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.images.repository_id}"
}

output "model_api_key_secret" {
  description = "Secret to add the GOOGLE_API_KEY version to."
  value       = google_secret_manager_secret.model_api_key.secret_id
}

output "wisdom_index" {
  description = "CONFIDANT_VECTOR_SEARCH_INDEX for confidant-ingest (null when the wisdom index is off)."
  value       = one(google_vertex_ai_index.wisdom[*].id)
}

output "wisdom_ingest_service_account" {
  description = "Run confidant-ingest as this account (gcloud ... --impersonate-service-account)."
  value       = one(google_service_account.ingest[*].email)
}

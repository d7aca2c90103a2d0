output "service_urls" {
  description = "HTTPS URL of each Cloud Run service (chat is the API apps call; jobs and sweep are internal)."
  value       = { for name, service in google_cloud_run_v2_service.service : name => service.uri }
}

output "chat_url" {
  description = "HTTPS URL of the chat service."
  value       = google_cloud_run_v2_service.service["chat"].uri
}

output "service_names" {
  description = "Cloud Run service names by workload (cloudbuild.yaml deploys these)."
  value       = { for name, service in google_cloud_run_v2_service.service : name => service.name }
}

output "service_accounts" {
  description = "Service account emails by workload (chat, jobs, sweep) and invoker (push, scheduler)."
  value = merge(
    { for name, account in google_service_account.workload : name => account.email },
    { for name, account in google_service_account.invoker : name => account.email },
  )
}

output "job_topics" {
  description = "Job topic ids by kind."
  value       = { for kind, topic in google_pubsub_topic.jobs : kind => topic.name }
}

output "dead_letter_subscriptions" {
  description = "Inspection subscription of each kind's dead-letter topic."
  value       = { for kind, sub in google_pubsub_subscription.dead_letter : kind => sub.name }
}

output "firestore_database" {
  value = google_firestore_database.main.name
}

output "image_repository" {
  description = "Docker repository for the Confidant image (<region>-docker.pkg.dev/<project>/<repo>)."
  value       = "${var.region}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.images.repository_id}"
}

output "secrets" {
  description = "Secrets to add versions to: service env secrets and the smoke test's."
  value = concat(
    [for secret in google_secret_manager_secret.env : secret.secret_id],
    [for secret in google_secret_manager_secret.smoke : secret.secret_id],
  )
}

output "wisdom_index" {
  description = "CONFIDANT_VECTOR_SEARCH_INDEX for confidant-ingest (null when the wisdom index is off)."
  value       = one(google_vertex_ai_index.wisdom[*].id)
}

output "wisdom_ingest_service_account" {
  description = "Run confidant-ingest as this account (gcloud ... --impersonate-service-account)."
  value       = one(google_service_account.ingest[*].email)
}

output "armor_ip" {
  description = "With armor_enabled: the load balancer's address (armor_domain's DNS A record)."
  value       = var.armor_enabled ? google_compute_global_address.chat[0].address : null
}

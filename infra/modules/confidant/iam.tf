# Least privilege: project roles from the role lists × workload service accounts; Pub/Sub,
# Secret Manager and Cloud Run permissions are granted on the single resource that needs them.

locals {
  workload_roles = {
    chat = var.chat_roles
    jobs = var.jobs_roles
  }
  workload_role_bindings = {
    for binding in flatten([
      for workload, roles in local.workload_roles : [
        for role in roles : { workload = workload, role = role }
      ]
    ]) : "${binding.workload}/${binding.role}" => binding
  }
}

resource "google_project_iam_member" "workload" {
  for_each = local.workload_role_bindings

  project = var.project_id
  role    = each.value.role
  member  = "serviceAccount:${google_service_account.workload[each.value.workload].email}"
}

# The chat service publishes the post-turn jobs it commits (outbox), and only to job topics.
resource "google_pubsub_topic_iam_member" "chat_publishes_jobs" {
  for_each = google_pubsub_topic.jobs

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${google_service_account.workload["chat"].email}"
}

# Dead-lettering: the Pub/Sub service agent must publish to the dead-letter topic and
# subscribe (to ack forwarded messages) on each job subscription.
resource "google_pubsub_topic_iam_member" "agent_publishes_dead_letters" {
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "agent_subscribes_jobs" {
  for_each = google_pubsub_subscription.jobs

  project      = var.project_id
  subscription = each.value.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}

# Push with OIDC: the Pub/Sub agent mints ID tokens as the push service account...
resource "google_service_account_iam_member" "agent_signs_as_push" {
  service_account_id = google_service_account.push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent
}

# ...which may invoke the jobs service, and nothing else.
resource "google_cloud_run_v2_service_iam_member" "push_invokes_jobs" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_service.jobs.name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.push.email}"
}

# Apps call the chat service directly; identity is the Firebase ID token checked in-app.
resource "google_cloud_run_v2_service_iam_member" "chat_public" {
  count = var.chat_public ? 1 : 0

  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_service.chat.name
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# Both services call the model with the same key.
resource "google_secret_manager_secret_iam_member" "workload_reads_model_key" {
  for_each = local.workloads

  project   = var.project_id
  secret_id = google_secret_manager_secret.model_api_key.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.workload[each.key].email}"
}

# The deployer (Cloud Build) pushes images and rolls out revisions running as the workload SAs.
resource "google_artifact_registry_repository_iam_member" "deployer_pushes" {
  count = var.deployer_member == null ? 0 : 1

  project    = var.project_id
  location   = var.region
  repository = google_artifact_registry_repository.images.name
  role       = "roles/artifactregistry.writer"
  member     = var.deployer_member
}

resource "google_project_iam_member" "deployer_deploys" {
  count = var.deployer_member == null ? 0 : 1

  project = var.project_id
  role    = "roles/run.developer"
  member  = var.deployer_member
}

resource "google_service_account_iam_member" "deployer_acts_as_workload" {
  for_each = var.deployer_member == null ? toset([]) : local.workloads

  service_account_id = google_service_account.workload[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = var.deployer_member
}

# Least privilege: project roles per workload (var.workload_roles); Pub/Sub, Secret Manager and
# Cloud Run permissions are granted on the single resource that needs them.

locals {
  # Vertex AI through the service account: Gemini and its embeddings for the services that call
  # the model (use_vertex; else they use the API key), and the wisdom index's findNeighbors,
  # always with the service account's credentials, for the service that retrieves wisdom.
  model_roles  = var.use_vertex ? ["roles/aiplatform.user"] : []
  wisdom_roles = var.wisdom_vector_search ? ["roles/aiplatform.user"] : []
  workload_role_bindings = {
    for binding in flatten([
      for workload in local.workloads : [
        for role in distinct(concat(
          var.workload_roles[workload],
          local.services[workload].model ? local.model_roles : [],
          local.services[workload].wisdom ? local.wisdom_roles : [],
        )) : { workload = workload, role = role }
      ]
    ]) : "${binding.workload}/${binding.role}" => binding
  }
  # Workloads that publish post-turn jobs: chat (after its commit) and sweep (the outbox).
  publishers = toset(["chat", "sweep"])
  topic_publishers = {
    for pair in setproduct(local.publishers, local.job_kinds) : "${pair[0]}/${pair[1]}" => {
      workload = pair[0]
      kind     = pair[1]
    }
  }
  secret_readers = {
    for pair in setproduct([for w, s in local.services : w if s.model], keys(local.secret_env)) :
    "${pair[0]}/${pair[1]}" => { workload = pair[0], env = pair[1] }
  }
}

resource "google_project_iam_member" "workload" {
  for_each = local.workload_role_bindings

  project = var.project_id
  role    = each.value.role
  member  = "serviceAccount:${google_service_account.workload[each.value.workload].email}"
}

resource "google_pubsub_topic_iam_member" "publishes_jobs" {
  for_each = local.topic_publishers

  project = var.project_id
  topic   = google_pubsub_topic.jobs[each.value.kind].name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${google_service_account.workload[each.value.workload].email}"
}

# Dead-lettering: the Pub/Sub service agent must publish to each dead-letter topic and
# subscribe (to ack forwarded messages) on each job subscription.
resource "google_pubsub_topic_iam_member" "agent_publishes_dead_letters" {
  for_each = google_pubsub_topic.dead_letter

  project = var.project_id
  topic   = each.value.name
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
  service_account_id = google_service_account.invoker["push"].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent
}

# ...which may invoke the jobs service, and nothing else; the scheduler's SA only the sweep.
resource "google_cloud_run_v2_service_iam_member" "invokers" {
  for_each = { push = "jobs", scheduler = "sweep" }

  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_service.service[each.value].name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.invoker[each.key].email}"
}

resource "google_secret_manager_secret_iam_member" "workload_reads" {
  for_each = local.secret_readers

  project   = var.project_id
  secret_id = google_secret_manager_secret.env[each.value.env].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.workload[each.value.workload].email}"
}

# The deployer (Cloud Build) pushes images, rolls out revisions running as the workload SAs and
# moves traffic back when the smoke test fails: on our repository and services only, never
# project-wide (cloudbuild.yaml only describes, deploys and moves traffic on these services).
resource "google_artifact_registry_repository_iam_member" "deployer_pushes" {
  count = var.deployer_member == null ? 0 : 1

  project    = var.project_id
  location   = var.region
  repository = google_artifact_registry_repository.images.name
  role       = "roles/artifactregistry.writer"
  member     = var.deployer_member
}

resource "google_cloud_run_v2_service_iam_member" "deployer_deploys" {
  for_each = var.deployer_member == null ? toset([]) : local.workloads

  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_service.service[each.key].name
  role     = "roles/run.developer"
  member   = var.deployer_member
}

resource "google_service_account_iam_member" "deployer_acts_as_workload" {
  for_each = var.deployer_member == null ? toset([]) : local.workloads

  service_account_id = google_service_account.workload[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = var.deployer_member
}

# taskflow (issue 12): only the chat service writes tasks to Notion.
resource "google_secret_manager_secret_iam_member" "chat_reads_notion_token" {
  count = var.notion_database_id == null ? 0 : 1

  project   = var.project_id
  secret_id = google_secret_manager_secret.notion_token[0].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.workload["chat"].email}"
}

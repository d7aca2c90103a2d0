# Secrets the services read as environment variables (local.secret_env: env name => secret id).
# Terraform creates the secrets, never their values:
#   printf %s "$KEY" | gcloud secrets versions add confidant-google-api-key --data-file=-
resource "google_secret_manager_secret" "env" {
  for_each = local.secret_env

  project   = var.project_id
  secret_id = each.value
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}

# What the Cloud Build smoke test signs in with (scripts/smoke_test.py): the Firebase web API key
# and the test user's password. Only the deployer may read them.
locals {
  smoke_secrets = toset(["${var.name_prefix}-smoke-api-key", "${var.name_prefix}-smoke-password"])
}

resource "google_secret_manager_secret" "smoke" {
  for_each = local.smoke_secrets

  project   = var.project_id
  secret_id = each.key
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}

resource "google_secret_manager_secret_iam_member" "deployer_reads_smoke" {
  for_each = var.deployer_member == null ? toset([]) : local.smoke_secrets

  project   = var.project_id
  secret_id = google_secret_manager_secret.smoke[each.key].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = var.deployer_member
}

# taskflow (issue 12): the Notion integration token, only when a Notion database is configured.
#   printf %s "$TOKEN" | gcloud secrets versions add confidant-notion-token --data-file=-
resource "google_secret_manager_secret" "notion_token" {
  count = var.notion_database_id == null ? 0 : 1

  project   = var.project_id
  secret_id = var.notion_token_secret_id
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}

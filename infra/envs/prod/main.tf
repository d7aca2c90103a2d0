# The prod environment: a thin root over the Confidant module (its own state bucket and tfvars).
# Versions, provider, inputs and outputs: root.tf (a symlink to infra/shared/root.tf).

module "confidant" {
  source = "../../modules/confidant"

  project_id                  = var.project_id
  region                      = var.region
  environment                 = "prod"
  image                       = var.image
  firebase_project_id         = var.firebase_project_id
  deployer_member             = var.deployer_member
  alert_notification_channels = var.alert_notification_channels
  cors_origins                = var.cors_origins
  wisdom_vector_search        = var.wisdom_vector_search
  wisdom_ingest_members       = var.wisdom_ingest_members

  # Prod: one warm chat instance (no cold start for the first user), protected from destroy.
  chat_min_instances  = 1
  chat_max_instances  = 20
  jobs_max_instances  = 10
  firestore_pitr      = true
  deletion_protection = true
}

# The dev environment: a thin root over the Confidant module (its own state bucket and tfvars).
# Versions, provider, inputs and outputs: root.tf (a symlink to infra/shared/root.tf).

module "confidant" {
  source = "../../modules/confidant"

  project_id                  = var.project_id
  region                      = var.region
  environment                 = "dev"
  image                       = var.image
  firebase_project_id         = var.firebase_project_id
  deployer_member             = var.deployer_member
  alert_notification_channels = var.alert_notification_channels
  cors_origins                = var.cors_origins
  wisdom_vector_search        = var.wisdom_vector_search
  wisdom_ingest_members       = var.wisdom_ingest_members

  # Dev: scale to zero, allow teardown, no point-in-time recovery.
  chat_min_instances  = 0
  chat_max_instances  = 3
  jobs_max_instances  = 2
  firestore_pitr      = false
  deletion_protection = false
}

# The prod environment: a thin root over the Confidant module (its own state bucket and tfvars).
terraform {
  required_version = ">= 1.6"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.50, < 7.0"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

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

  # Prod: one warm chat instance (no cold start for the first user), protected from destroy.
  chat_min_instances  = 1
  chat_max_instances  = 20
  jobs_max_instances  = 10
  firestore_pitr      = true
  deletion_protection = true
}

output "chat_url" {
  value = module.confidant.chat_url
}

output "service_names" {
  value = module.confidant.service_names
}

output "image_repository" {
  value = module.confidant.image_repository
}

output "service_accounts" {
  value = module.confidant.service_accounts
}

output "secrets" {
  value = module.confidant.secrets
}

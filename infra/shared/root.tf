# What every environment root has besides its module call: versions, provider, inputs, outputs.
# Each infra/envs/<env>/root.tf is a symlink to this file, so the roots differ only in
# main.tf (the module inputs that make the environment) and backend.tf (its state prefix).
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

variable "project_id" {
  description = "Google Cloud project of this environment."
  type        = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "image" {
  description = "Image of the first apply (any reachable image); later rollouts come from cloudbuild.yaml."
  type        = string
}

variable "firebase_project_id" {
  description = "Firebase project whose ID tokens are accepted; null = project_id."
  type        = string
  default     = null
}

variable "deployer_member" {
  description = "e.g. serviceAccount:<number>@cloudbuild.gserviceaccount.com"
  type        = string
  default     = null
}

variable "alert_notification_channels" {
  type    = list(string)
  default = []
}

variable "cors_origins" {
  type    = list(string)
  default = []
}

variable "wisdom_vector_search" {
  description = "Serve wisdom from Vertex AI Vector Search (index + endpoint, billed per node hour)."
  type        = bool
  default     = false
}

variable "wisdom_ingest_members" {
  description = "Principals allowed to run confidant-ingest as the ingestion service account."
  type        = list(string)
  default     = []
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

output "wisdom_index" {
  value = module.confidant.wisdom_index
}

output "wisdom_ingest_service_account" {
  value = module.confidant.wisdom_ingest_service_account
}

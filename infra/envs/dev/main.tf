# Dev environment: a thin root over the Confidant module (its own state, its own tfvars).
terraform {
  required_version = ">= 1.6"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.14, < 8.0"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

variable "project_id" {
  description = "Dev project id."
  type        = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "image" {
  description = "Image to deploy first; later rollouts come from cloudbuild.yaml."
  type        = string
}

variable "firebase_project_id" {
  type    = string
  default = null
}

variable "deployer_member" {
  description = "e.g. serviceAccount:<number>@cloudbuild.gserviceaccount.com"
  type        = string
  default     = null
}

module "confidant" {
  source = "../../modules/confidant"

  project_id          = var.project_id
  region              = var.region
  environment         = "dev"
  image               = var.image
  firebase_project_id = var.firebase_project_id
  deployer_member     = var.deployer_member

  # Dev: scale to zero and allow teardown.
  chat_min_instances  = 0
  chat_max_instances  = 3
  jobs_max_instances  = 2
  deletion_protection = false
}

output "chat_url" {
  value = module.confidant.chat_url
}

output "jobs_url" {
  value = module.confidant.jobs_url
}

output "image_repository" {
  value = module.confidant.image_repository
}

output "service_accounts" {
  value = module.confidant.service_accounts
}

# Bootstrap: the GCS bucket that holds one environment's Terraform state. Run once per
# environment with local state (the bucket cannot hold the state that creates it):
#   cd infra/bootstrap && terraform init && terraform apply -var project_id=<project> -var environment=dev
# then keep this directory's terraform.tfstate (or delete it: the bucket is all that matters).
terraform {
  required_version = ">= 1.6"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.50, < 7.0"
    }
  }
}

variable "project_id" {
  description = "Project of the environment whose state this bucket holds."
  type        = string
}

variable "environment" {
  description = "dev, staging or prod."
  type        = string
}

variable "location" {
  type    = string
  default = "US"
}

provider "google" {
  project = var.project_id
}

resource "google_project_service" "storage" {
  project            = var.project_id
  service            = "storage.googleapis.com"
  disable_on_destroy = false
}

resource "google_storage_bucket" "tfstate" {
  # checkov:skip=CKV_GCP_62:Usage logs need a second bucket; who reads or writes state is recorded by Cloud Audit Logs (data access logs for Cloud Storage), which docs/deploy.md enables.
  project                     = var.project_id
  name                        = "${var.project_id}-tfstate"
  location                    = var.location
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = false
  labels                      = { app = "confidant", environment = var.environment, purpose = "tfstate" }

  # Every state write is a new object version: an earlier state can be restored.
  versioning {
    enabled = true
  }

  lifecycle_rule {
    condition {
      num_newer_versions = 20
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.storage]
}

output "bucket" {
  description = "Pass to the environment's init: -backend-config=\"bucket=<this>\"."
  value       = google_storage_bucket.tfstate.name
}

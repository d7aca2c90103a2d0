# Provider and Terraform versions for the Confidant module.
terraform {
  required_version = ">= 1.6"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.14, < 8.0"
    }
  }
}

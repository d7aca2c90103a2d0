# Provider and Terraform versions for the Confidant module. The attribute check in
# tests/infra/test_schema.py uses the google provider 6.50 schema (infra/schema/), so the module
# stays on the 6.x line that schema describes.
terraform {
  required_version = ">= 1.6"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.50, < 7.0"
    }
  }
}

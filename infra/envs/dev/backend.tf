# State in this environment's own bucket (created by infra/bootstrap), supplied at init:
#   terraform init -backend-config="bucket=<project>-tfstate"
terraform {
  backend "gcs" {
    prefix = "confidant/dev"
  }
}

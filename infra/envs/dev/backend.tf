# State in GCS, one prefix per environment. The bucket is supplied at init (partial config):
#   terraform init -backend-config="bucket=<your-tfstate-bucket>"
terraform {
  backend "gcs" {
    prefix = "confidant/dev"
  }
}

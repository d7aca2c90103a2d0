# Inputs of the dev root; set them in terraform.tfvars (see terraform.tfvars.example).

variable "project_id" {
  description = "Google Cloud project of the dev environment."
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

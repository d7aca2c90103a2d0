# One service account per workload (each Cloud Run service), so each gets only its own grants,
# plus one identity per caller that invokes a private service (Pub/Sub push, Cloud Scheduler).
locals {
  workloads = toset(keys(local.services))
  invokers  = toset(["push", "scheduler"])
}

resource "google_service_account" "workload" {
  for_each = local.workloads

  project      = var.project_id
  account_id   = "${var.name_prefix}-${each.key}"
  display_name = "Confidant ${each.key} service (${var.environment})"

  depends_on = [google_project_service.this]
}

resource "google_service_account" "invoker" {
  for_each = local.invokers

  project      = var.project_id
  account_id   = "${var.name_prefix}-${each.key}"
  display_name = "Confidant ${each.key} invoker (${var.environment})"

  depends_on = [google_project_service.this]
}

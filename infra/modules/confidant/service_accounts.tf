# One service account per workload, so each gets only its own roles.
locals {
  workloads = toset(["chat", "jobs"])
}

resource "google_service_account" "workload" {
  for_each = local.workloads

  project      = var.project_id
  account_id   = "${var.name_prefix}-${each.key}"
  display_name = "Confidant ${each.key} service (${var.environment})"

  depends_on = [google_project_service.this]
}

# Not a workload: the identity Pub/Sub signs push requests with; it may only invoke the jobs service.
resource "google_service_account" "push" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-push"
  display_name = "Confidant Pub/Sub push invoker (${var.environment})"

  depends_on = [google_project_service.this]
}

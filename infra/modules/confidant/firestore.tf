# Firestore (native mode): the database, the TTL policy that expires job records, and index
# exemptions for large JSON fields (indexing them costs write latency and index storage).

resource "google_firestore_database" "main" {
  project                 = var.project_id
  name                    = var.firestore_database
  location_id             = var.firestore_location
  type                    = "FIRESTORE_NATIVE"
  concurrency_mode        = "OPTIMISTIC" # turns commit with revision-checked transactions
  delete_protection_state = var.deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy         = var.deletion_protection ? "ABANDON" : "DELETE"

  depends_on = [google_project_service.this]
}

# jobs/{job_id}.expire_at: Firestore deletes outbox/idempotency records once it has passed.
resource "google_firestore_field" "jobs_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "jobs"
  field      = "expire_at"

  ttl_config {}

  # Not queried; a monotonically increasing indexed timestamp would only add write hotspots.
  index_config {}
}

resource "google_firestore_field" "unindexed" {
  for_each = {
    for item in var.firestore_unindexed_fields : "${item.collection}.${item.field}" => item
  }

  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = each.value.collection
  field      = each.value.field

  # An empty index_config disables every single-field index on the field.
  index_config {}
}

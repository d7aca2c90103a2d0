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

# --- Post-turn jobs (confidant/jobs) ------------------------------------------------------

# The sweep's query: jobs where status == "pending" and created_at < cut-off, oldest first.
resource "google_firestore_index" "jobs_pending" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "jobs"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }
  fields {
    field_path = "created_at"
    order      = "ASCENDING"
  }
}

# The emotion trajectory: users/{uid}/emotions filtered by app and/or session, newest first.
resource "google_firestore_index" "emotions" {
  for_each = {
    app         = ["app"]
    session     = ["session_id"]
    app_session = ["app", "session_id"]
  }

  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "emotions"

  dynamic "fields" {
    for_each = each.value
    content {
      field_path = fields.value
      order      = "ASCENDING"
    }
  }
  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }
}

# Memory search: find_nearest on users/{uid}/memories.embedding (cosine), optionally app-scoped.
resource "google_firestore_index" "memories_vector" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "memories"

  fields {
    field_path = "__name__"
    order      = "ASCENDING"
  }
  fields {
    field_path = "embedding"
    vector_config {
      dimension = var.memory_embedding_dimensions
      flat {}
    }
  }
}

resource "google_firestore_index" "memories_vector_by_app" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "memories"

  fields {
    field_path = "app"
    order      = "ASCENDING"
  }
  fields {
    field_path = "embedding"
    vector_config {
      dimension = var.memory_embedding_dimensions
      flat {}
    }
  }
}

# Memories listed newest first, optionally of one app (GET /v1/me/memories, the memories source).
resource "google_firestore_index" "memories_by_app" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "memories"

  fields {
    field_path = "app"
    order      = "ASCENDING"
  }
  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }
}

# job_failures/{id}.expire_at: poison deliveries are kept a week for inspection.
resource "google_firestore_field" "job_failures_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "job_failures"
  field      = "expire_at"

  ttl_config {}
  index_config {}
}

# Firestore (native mode): the database, the composite indexes the code's queries need, the TTL
# policies on `expire_at` (outbox records, stream logs, turn-queue tickets, daily usage), and
# index exemptions for large JSON fields (indexing them costs write latency and index storage).
# tests/infra/test_drift.py derives the indexes the store adapters' queries need and fails when
# one is missing here or one here is unused.

locals {
  # Memory embeddings come from the deployment's embedder: Vertex AI's model when wisdom runs on
  # Vector Search (CONFIDANT_EMBEDDINGS=vertex), else the offline hashed embedder (512).
  memory_embedding_dimension = var.wisdom_vector_search ? var.wisdom_embedding_dimensions : 512

  firestore_composite_indexes = {
    # FirestoreSessionStore.list_memories(app=...): where app == X order by created_at desc.
    memories_by_app = {
      collection  = "memories"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "app", order = "ASCENDING" },
        { field_path = "created_at", order = "DESCENDING" },
      ]
    }
    # FirestoreJobStore.due_jobs (the outbox sweep): status == pending, created_at < t, oldest first.
    jobs_due = {
      collection  = "jobs"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "status", order = "ASCENDING" },
        { field_path = "created_at", order = "ASCENDING" },
      ]
    }
    # FirestoreJobStore.emotions: the trajectory by app, by session, or both; newest first.
    emotions_by_app = {
      collection  = "emotions"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "app", order = "ASCENDING" },
        { field_path = "created_at", order = "DESCENDING" },
      ]
    }
    emotions_by_session = {
      collection  = "emotions"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "session_id", order = "ASCENDING" },
        { field_path = "created_at", order = "DESCENDING" },
      ]
    }
    emotions_by_app_session = {
      collection  = "emotions"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "app", order = "ASCENDING" },
        { field_path = "session_id", order = "ASCENDING" },
        { field_path = "created_at", order = "DESCENDING" },
      ]
    }
    # FirestoreJobStore.search_memories: find_nearest on the embedding (cosine), optionally
    # within one app. The dimension is the embedder's (HashedEmbedder 512; Vertex: its model's).
    memories_nearest = {
      collection  = "memories"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "embedding", vector_dimension = local.memory_embedding_dimension },
      ]
    }
    memories_nearest_by_app = {
      collection  = "memories"
      query_scope = "COLLECTION"
      fields = [
        { field_path = "app", order = "ASCENDING" },
        { field_path = "embedding", vector_dimension = local.memory_embedding_dimension },
      ]
    }
  }

  # Single-field index overrides for collection-group queries (automatic single-field indexes
  # only serve queries on one collection). The collection scope is kept as well.
  firestore_collection_group_fields = {
    # FirestoreSessionStore.list_sessions(user_id=None): collection group "sessions", app == X.
    sessions_app = { collection = "sessions", field = "app" }
  }
}

resource "google_firestore_database" "main" {
  project                 = var.project_id
  name                    = var.firestore_database
  location_id             = var.firestore_location
  type                    = "FIRESTORE_NATIVE"
  concurrency_mode        = "OPTIMISTIC" # turns commit with revision-checked writes
  delete_protection_state = var.deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy         = var.deletion_protection ? "ABANDON" : "DELETE"
  # Point-in-time recovery: 7 days of versions to read back after a bad write.
  point_in_time_recovery_enablement = var.firestore_pitr ? "POINT_IN_TIME_RECOVERY_ENABLED" : "POINT_IN_TIME_RECOVERY_DISABLED"

  depends_on = [google_project_service.this]
}

resource "google_firestore_index" "composite" {
  for_each = local.firestore_composite_indexes

  project     = var.project_id
  database    = google_firestore_database.main.name
  collection  = each.value.collection
  query_scope = each.value.query_scope

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path = fields.value.field_path
      order      = lookup(fields.value, "order", null)

      dynamic "vector_config" {
        for_each = lookup(fields.value, "vector_dimension", null) == null ? [] : [1]
        content {
          dimension = fields.value.vector_dimension
          flat {}
        }
      }
    }
  }
}

resource "google_firestore_field" "collection_group" {
  for_each = local.firestore_collection_group_fields

  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = each.value.collection
  field      = each.value.field

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "DESCENDING"
      query_scope = "COLLECTION"
    }
  }
}

# jobs/{job_id}.expire_at (FirestoreSessionStore writes created_at + JOB_RECORD_TTL): Firestore
# deletes outbox/idempotency records once it has passed.
resource "google_firestore_field" "jobs_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "jobs"
  field      = "expire_at"

  ttl_config {}

  # Not queried; a monotonically increasing indexed timestamp would only add write hotspots.
  index_config {}
}

# job_failures/{id}.expire_at (FirestoreJobStore.record_failure: received + 7 days): poison
# messages are kept for inspection, then expire.
resource "google_firestore_field" "job_failures_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = "job_failures"
  field      = "expire_at"

  ttl_config {}
  index_config {}
}

# Short-lived records that carry expire_at, deleted by Firestore once it has passed:
# - streams, stream_parts: resumable streams (confidant/streaming/firestore_log.py), a turn's
#   stream head (sessions/{sid}/streams/{turn}) and its part batches
#   (…/streams/{turn}/stream_parts/{first}), expire_at = the turn's start +
#   CONFIDANT_STREAM_RETENTION_S;
# - turn_queue: waiting messages' tickets (confidant/sessions/firestore_turn_queue.py,
#   sessions/{sid}/turn_queue/{ticket}), expire_at = when the ticket stops counting, so a ticket
#   whose waiter died does not stay under the session;
# - days: daily usage counters (confidant/quota/firestore_ledger.py,
#   usage/{uid}/days/{YYYY-MM-DD}), expire_at = the day's end + USAGE_RETENTION (90 days); only
#   today's are ever read.
resource "google_firestore_field" "short_lived_expire_at" {
  for_each = toset(["streams", "stream_parts", "turn_queue", "days"])

  project    = var.project_id
  database   = google_firestore_database.main.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}
  index_config {}
}

# The stream logs' policies had a resource of their own: same keys, kept in place.
moved {
  from = google_firestore_field.stream_expire_at
  to   = google_firestore_field.short_lived_expire_at
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

# Cloud Armor in front of the chat service (issue 14): off by default (`armor_enabled`).
#
# The service limits request rates itself with a token bucket per instance (per user and per
# client IP, confidant/quota/rate.py): free per request, and a client gets at most
# max_instances times its rate. But every request of a flood still reaches an instance and is
# billed. Cloud Armor drops a flood at Google's edge, per client IP, before Cloud Run sees it.
# A security policy attaches to a load balancer's backend service, so enabling it puts an
# external Application Load Balancer (serverless NEG -> backend service -> URL map -> HTTPS
# proxy with a managed certificate for `armor_domain`) in front of the chat service, and the
# service then accepts traffic from load balancers only (cloud_run.tf), so the run.app URL
# cannot bypass the policy. Point the apps (and the smoke test) at `armor_domain`, and the
# domain's DNS A record at the `armor_ip` output.
#
# The threshold is per IP and far above what one person sends (a crisis message is never
# refused by the service's own limits): only floods reach it. People behind one shared
# address that floods are throttled with it; that is the price of stopping the flood at the edge.

resource "google_compute_security_policy" "chat" {
  count = var.armor_enabled ? 1 : 0

  project     = var.project_id
  name        = "${var.name_prefix}-chat-armor"
  description = "Per-IP rate limit in front of the chat service (floods answered 429 at the edge)."
  type        = "CLOUD_ARMOR"

  rule {
    description = "Throttle each client IP past armor_rate_limit_count requests per interval."
    action      = "throttle"
    priority    = 1000
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
    rate_limit_options {
      conform_action = "allow"
      exceed_action  = "deny(429)"
      enforce_on_key = "IP"
      rate_limit_threshold {
        count        = var.armor_rate_limit_count
        interval_sec = var.armor_rate_limit_interval_s
      }
    }
  }

  rule {
    description = "Log4j lookup attempts (CVE-2021-44228): the service is Python, but they are never legitimate."
    action      = "deny(403)"
    priority    = 900
    match {
      expr {
        expression = "evaluatePreconfiguredExpr('cve-canary')"
      }
    }
  }

  rule {
    description = "Default: allow."
    action      = "allow"
    priority    = 2147483647
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
  }

  depends_on = [google_project_service.this]
}

resource "google_compute_region_network_endpoint_group" "chat" {
  count = var.armor_enabled ? 1 : 0

  project               = var.project_id
  name                  = "${var.name_prefix}-chat-neg"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  cloud_run {
    service = google_cloud_run_v2_service.service["chat"].name
  }
}

resource "google_compute_backend_service" "chat" {
  count = var.armor_enabled ? 1 : 0

  project               = var.project_id
  name                  = "${var.name_prefix}-chat-backend"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"
  security_policy       = google_compute_security_policy.chat[0].id
  backend {
    group = google_compute_region_network_endpoint_group.chat[0].id
  }
  log_config {
    enable = true
  }
}

resource "google_compute_url_map" "chat" {
  count = var.armor_enabled ? 1 : 0

  project         = var.project_id
  name            = "${var.name_prefix}-chat"
  default_service = google_compute_backend_service.chat[0].id
}

resource "google_compute_managed_ssl_certificate" "chat" {
  count = var.armor_enabled ? 1 : 0

  project = var.project_id
  name    = "${var.name_prefix}-chat-cert"
  managed {
    domains = [var.armor_domain]
  }

  lifecycle {
    precondition {
      condition     = var.armor_domain != null
      error_message = "armor_enabled needs armor_domain: the load balancer's certificate is issued for it."
    }
  }
}

resource "google_compute_ssl_policy" "chat" {
  count = var.armor_enabled ? 1 : 0

  project         = var.project_id
  name            = "${var.name_prefix}-chat-tls"
  profile         = "MODERN"
  min_tls_version = "TLS_1_2"
}

resource "google_compute_target_https_proxy" "chat" {
  count = var.armor_enabled ? 1 : 0

  project          = var.project_id
  name             = "${var.name_prefix}-chat-https"
  url_map          = google_compute_url_map.chat[0].id
  ssl_certificates = [google_compute_managed_ssl_certificate.chat[0].id]
  ssl_policy       = google_compute_ssl_policy.chat[0].id
}

resource "google_compute_global_address" "chat" {
  count = var.armor_enabled ? 1 : 0

  project = var.project_id
  name    = "${var.name_prefix}-chat-ip"
}

resource "google_compute_global_forwarding_rule" "chat" {
  count = var.armor_enabled ? 1 : 0

  project               = var.project_id
  name                  = "${var.name_prefix}-chat-https"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  target                = google_compute_target_https_proxy.chat[0].id
  ip_address            = google_compute_global_address.chat[0].id
  port_range            = "443"
  labels                = local.labels
}

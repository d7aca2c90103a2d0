"""Quotas and limits (issue 14): daily usage by tier, request rates, caps per turn."""

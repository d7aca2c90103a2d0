"""Confidant service layer: turn lifecycle, sessions, jobs, identity, adapters."""

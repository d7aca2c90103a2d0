"""The chat turn lifecycle."""

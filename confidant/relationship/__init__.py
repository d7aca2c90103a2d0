"""The relationship app's own data: persons, the self-profile and profile proposals."""

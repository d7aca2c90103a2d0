"""Benchmarks; run each as a module from the repository root (see each module's docstring)."""

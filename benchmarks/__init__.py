"""Benchmarks and offline quality tools, run from a checkout (never shipped in the package)."""

"""The machinery that trains planned runs: executors (local pool, Ray cluster)."""

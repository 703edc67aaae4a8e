"""The exit codes of `assay eval` (how a run earns them: outcome.py), importable by the
command before anything else (a config error exits 2 in a fifth of a second)."""

OK, FAILED_CHECKS, USAGE, BUDGET, PROVIDER_ERRORS = 0, 1, 2, 3, 4
INTERRUPTED = 130  # Ctrl-C, as shells count SIGINT: the run is kept as cancelled

"""The corpus programs are scripts run in subprocesses, never test modules to collect."""

collect_ignore_glob = ["programs/*.py"]

"""Service functions shared by views, tasks and the CLI. They never commit on a caller's behalf
unless their docstring says so."""

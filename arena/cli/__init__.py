"""The ``arena`` command line: one module per subcommand."""

"""The command line, including the fuzz suite."""

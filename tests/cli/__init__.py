"""The command line, askkit.cli."""

"""`conteur` on the command line, thin over the same functions the server uses."""

"""conteur's server: the SQLite event store, the Litestar app, the CLI."""

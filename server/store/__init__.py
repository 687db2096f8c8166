"""The event store behind one interface (``interface.EventStore``): SQLite today, the bytes every store writes, its hash chain, the file's checks, backups and replay."""

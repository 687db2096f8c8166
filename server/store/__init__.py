"""The event store behind one interface: SQLite today, its hash chain, the file's checks, backups and replay."""

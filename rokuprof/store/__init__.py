"""Storage shell: durable files, spool, retention, upload (I/O lives here, not in the core)."""

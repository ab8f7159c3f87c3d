-- One row per consumer group that has ever been leased: its holder, its
-- fencing token (one more with every new holder, so the row stays when the
-- lease is released: expires_at is then 0) and its expiry in Unix
-- milliseconds, judged by the clock of the process writing, read while it
-- holds the database's write lock.
CREATE TABLE "{{prefix}}leases" (
	context    TEXT    NOT NULL,
	processor  TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	holder     TEXT    NOT NULL,
	token      INTEGER NOT NULL CHECK (token >= 1),
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (context, processor, name)
) STRICT, WITHOUT ROWID;

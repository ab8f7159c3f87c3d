-- One row per projection with builds (a Schema): its state as JSON (the
-- live build queries read, the build a rebuild fills, the retired build
-- to drop, the last build number), changed only in transactions that hold
-- the checkpoints concerned.
CREATE TABLE "{{prefix}}projections" (
	name       TEXT    NOT NULL PRIMARY KEY,
	state      TEXT    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
-- One row per stream a projection's build passed without its writes (its
-- failure was recorded): a compensation retry applies the stream to that
-- build once and removes the row in the same transaction.
CREATE TABLE "{{prefix}}projection_marks" (
	processor TEXT NOT NULL,
	name      TEXT NOT NULL,
	stream_id TEXT NOT NULL,
	PRIMARY KEY (processor, name, stream_id)
) STRICT, WITHOUT ROWID;

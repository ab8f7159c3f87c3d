-- One row per consumer group reading the context's global log: the group
-- (a factum.Function; a processor's group has an empty name), its position
-- (tx, seq) and when it last moved, in Unix milliseconds. A save is one
-- upsert whose WHERE compares (tx, seq) as a row value, so a position never
-- moves backwards, whatever the order concurrent saves commit in.
CREATE TABLE "{{prefix}}checkpoints" (
	context    TEXT    NOT NULL,
	processor  TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	tx         INTEGER NOT NULL CHECK (tx >= 0),
	seq        INTEGER NOT NULL CHECK (seq >= 0),
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (context, processor, name)
) STRICT, WITHOUT ROWID;

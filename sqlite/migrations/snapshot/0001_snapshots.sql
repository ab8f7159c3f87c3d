-- One row per aggregate: its latest snapshot. The columns are those of
-- sqlquery.SnapshotSchema (times in epoch milliseconds, 0 for none; deleted
-- 0 or 1; the state as JSON text), plus the aggregate type. The primary key
-- serves Load, the aggregate-type scope of every query and the default
-- order (aggregate ID). Indexes for hot query fields are added by the
-- application: see SnapshotStore.
CREATE TABLE "{{prefix}}snapshots" (
	aggregate        TEXT    NOT NULL,
	aggregate_id     TEXT    NOT NULL,
	tenant_id        TEXT    NOT NULL,
	owner_id         TEXT    NOT NULL,
	version          INTEGER NOT NULL CHECK (version >= 1),
	event_id         TEXT    NOT NULL,
	first_operator   TEXT    NOT NULL,
	operator         TEXT    NOT NULL,
	first_event_time INTEGER NOT NULL,
	event_time       INTEGER NOT NULL,
	snapshot_time    INTEGER NOT NULL,
	deleted          INTEGER NOT NULL CHECK (deleted IN (0, 1)),
	state            TEXT    NOT NULL,
	PRIMARY KEY (aggregate, aggregate_id)
) STRICT;

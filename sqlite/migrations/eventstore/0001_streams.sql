-- One row per event stream: the stream's events are one JSON array, so an
-- append is one row. seq is the global log position; AUTOINCREMENT keeps it
-- from ever being reused.
CREATE TABLE "{{prefix}}streams" (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	aggregate    TEXT    NOT NULL,
	aggregate_id TEXT    NOT NULL,
	tenant       TEXT    NOT NULL,
	version      INTEGER NOT NULL CHECK (version >= 1),
	stream_id    TEXT    NOT NULL,
	command_id   TEXT    NOT NULL,
	request_id   TEXT    NOT NULL,
	owner_id     TEXT    NOT NULL,
	header       TEXT,
	create_time  INTEGER NOT NULL, -- Unix microseconds
	events       TEXT    NOT NULL
) STRICT;

-- The append contract: one stream per (aggregate, version) and per
-- (aggregate, request ID).
CREATE UNIQUE INDEX "{{prefix}}streams_ver" ON "{{prefix}}streams" (aggregate, aggregate_id, version);
CREATE UNIQUE INDEX "{{prefix}}streams_req" ON "{{prefix}}streams" (aggregate, aggregate_id, request_id);

-- One entry per aggregate (its creating stream): aggregate scans and the
-- tenant check read it alone.
CREATE INDEX "{{prefix}}streams_agg" ON "{{prefix}}streams" (aggregate, aggregate_id, tenant) WHERE version = 1;

-- One row per event stream: the stream's events are one JSON array, so an
-- append is one row and one statement. json, not jsonb: bodies are stored
-- and returned byte for byte, and nothing here queries inside them.
--
-- The global log is ordered by (tx, seq): tx is the appending transaction's
-- ID, seq comes from a sequence at insert time. Readers only read rows whose
-- tx is below the oldest transaction still running (see ReadLog), so a
-- stream that commits late can never land behind a checkpoint.
CREATE TABLE "{{prefix}}streams" (
	tx           xid8        NOT NULL DEFAULT pg_current_xact_id(),
	seq          bigint      GENERATED ALWAYS AS IDENTITY,
	aggregate    text        COLLATE "C" NOT NULL,
	aggregate_id text        COLLATE "C" NOT NULL,
	tenant       text        COLLATE "C" NOT NULL,
	version      integer     NOT NULL CHECK (version >= 1),
	stream_id    text        NOT NULL,
	command_id   text        NOT NULL,
	request_id   text        COLLATE "C" NOT NULL,
	owner_id     text        NOT NULL,
	header       json,
	create_time  timestamptz NOT NULL,
	events       json        NOT NULL
);

-- The append contract: one stream per (aggregate, version) and per
-- (aggregate, request ID). The request index leads with request_id after
-- the type, so that it never serves (and the planner never picks it for)
-- lookups of one aggregate's versions, which would then scan all of them.
CREATE UNIQUE INDEX "{{prefix}}streams_ver" ON "{{prefix}}streams" (aggregate, aggregate_id, version);
CREATE UNIQUE INDEX "{{prefix}}streams_req" ON "{{prefix}}streams" (aggregate, request_id, aggregate_id);

-- The global log, in read order.
CREATE INDEX "{{prefix}}streams_log" ON "{{prefix}}streams" (tx, seq);

-- One entry per aggregate (its creating stream): aggregate scans and the
-- tenant check read it alone.
CREATE INDEX "{{prefix}}streams_agg" ON "{{prefix}}streams" (aggregate, aggregate_id) INCLUDE (tenant) WHERE version = 1;

-- One row per aggregate: its latest snapshot. The columns are those of
-- sqlquery.SnapshotSchema (times in epoch milliseconds, 0 for none; the
-- state as jsonb), plus the aggregate type. Text columns compare in byte
-- order (COLLATE "C"), as queries do, so the primary key also serves the
-- default order by aggregate ID within one type. Indexes for hot query
-- fields are added by the application: see SnapshotStore.
CREATE TABLE "{{prefix}}snapshots" (
	aggregate        text    COLLATE "C" NOT NULL,
	aggregate_id     text    COLLATE "C" NOT NULL,
	tenant_id        text    COLLATE "C" NOT NULL,
	owner_id         text    COLLATE "C" NOT NULL,
	version          bigint  NOT NULL CHECK (version >= 1),
	event_id         text    COLLATE "C" NOT NULL,
	first_operator   text    COLLATE "C" NOT NULL,
	operator         text    COLLATE "C" NOT NULL,
	first_event_time bigint  NOT NULL,
	event_time       bigint  NOT NULL,
	snapshot_time    bigint  NOT NULL,
	deleted          boolean NOT NULL,
	state            jsonb   NOT NULL,
	CONSTRAINT "{{prefix}}snaps_pk" PRIMARY KEY (aggregate, aggregate_id)
);

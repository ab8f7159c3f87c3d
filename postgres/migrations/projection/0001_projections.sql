-- One row per projection with builds (a Schema): its state as JSON (the
-- live build queries read, the build a rebuild fills, the retired build
-- to drop, the last build number), changed only in transactions that hold
-- the checkpoints concerned; transactions lock the row FOR UPDATE.
CREATE TABLE "{{prefix}}projections" (
	name       text        COLLATE "C" NOT NULL,
	state      text        NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT "{{prefix}}projections_pk" PRIMARY KEY (name)
);
-- One row per stream a projection's build passed without its writes (its
-- failure was recorded): a compensation retry applies the stream to that
-- build once and removes the row in the same transaction.
CREATE TABLE "{{prefix}}projection_marks" (
	processor text COLLATE "C" NOT NULL,
	name      text COLLATE "C" NOT NULL,
	stream_id text COLLATE "C" NOT NULL,
	CONSTRAINT "{{prefix}}projection_marks_pk" PRIMARY KEY (processor, name, stream_id)
);

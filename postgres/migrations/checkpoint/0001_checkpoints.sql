-- One row per consumer group reading the context's global log: the group
-- (a factum.Function; a processor's group has an empty name), its position
-- (tx, seq) and when it last moved. A save is one upsert whose WHERE
-- compares (tx, seq) as a row value, so a position never moves backwards,
-- whatever the order concurrent saves commit in.
CREATE TABLE "{{prefix}}checkpoints" (
	context    text        COLLATE "C" NOT NULL,
	processor  text        COLLATE "C" NOT NULL,
	name       text        COLLATE "C" NOT NULL,
	tx         bigint      NOT NULL CHECK (tx >= 0),
	seq        bigint      NOT NULL CHECK (seq >= 0),
	updated_at timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT "{{prefix}}ckpts_pk" PRIMARY KEY (context, processor, name)
);

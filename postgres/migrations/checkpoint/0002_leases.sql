-- One row per consumer group that has ever been leased: its holder, its
-- fencing token (one more with every new holder, so the row stays when the
-- lease is released: expires_at is then the epoch) and its expiry, judged
-- by clock_timestamp() at the moment of each write, after its row lock.
CREATE TABLE "{{prefix}}leases" (
	context    text        COLLATE "C" NOT NULL,
	processor  text        COLLATE "C" NOT NULL,
	name       text        COLLATE "C" NOT NULL,
	holder     text        NOT NULL,
	token      bigint      NOT NULL CHECK (token >= 1),
	expires_at timestamptz NOT NULL,
	CONSTRAINT "{{prefix}}leases_pk" PRIMARY KEY (context, processor, name)
);

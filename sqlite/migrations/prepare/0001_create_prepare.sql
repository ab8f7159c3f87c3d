-- One row per reservation of an application key (see package prepare).
-- expires_at is in Unix milliseconds; 9223372036854775807 (TTLForever)
-- means never. The partial index serves the purge of expired rows without
-- costing anything for permanent reservations.
CREATE TABLE {{prefix}}prepare (
	name TEXT NOT NULL,
	key TEXT NOT NULL,
	value BLOB NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (name, key)
) WITHOUT ROWID;

CREATE INDEX {{prefix}}prepare_expiring ON {{prefix}}prepare (expires_at)
	WHERE expires_at < 9223372036854775807;

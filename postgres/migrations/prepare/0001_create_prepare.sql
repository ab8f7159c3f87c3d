-- One row per reservation of an application key (see package prepare).
-- expires_at is in Unix milliseconds; 9223372036854775807 (TTLForever)
-- means never. Expiry is judged by the database's clock, clock_timestamp(),
-- once a row is locked (see postgres.PrepareBackend; 0002 defines the key
-- change that way). The
-- partial index serves the purge of expired rows without costing anything
-- for permanent reservations.
CREATE TABLE {{prefix}}prepare (
	name TEXT NOT NULL,
	key TEXT NOT NULL,
	value BYTEA NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (name, key)
);

CREATE INDEX {{prefix}}prepare_expiring ON {{prefix}}prepare (expires_at)
	WHERE expires_at < 9223372036854775807;

-- The key change as one statement, and so one transaction, in one round
-- trip: take the new key if it is free or lapsed (false when it is not),
-- then delete the old key if the old value holds it; otherwise raise
-- SQLSTATE FP001, which aborts the statement and undoes the first step.
CREATE FUNCTION {{prefix}}prepare_change_key(
	p_name TEXT, p_old_key TEXT, p_old_value BYTEA,
	p_new_key TEXT, p_new_value BYTEA, p_expires_at BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
	now_ms BIGINT := floor(extract(epoch FROM now()) * 1000);
BEGIN
	INSERT INTO {{prefix}}prepare AS p (name, key, value, expires_at)
	VALUES (p_name, p_new_key, p_new_value, p_expires_at)
	ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
	WHERE p.expires_at < now_ms;
	IF NOT FOUND THEN
		RETURN FALSE;
	END IF;
	DELETE FROM {{prefix}}prepare
	WHERE name = p_name AND key = p_old_key AND value = p_old_value AND expires_at >= now_ms;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'prepare: old key is not held by the old value' USING ERRCODE = 'FP001';
	END IF;
	RETURN TRUE;
END
$$;

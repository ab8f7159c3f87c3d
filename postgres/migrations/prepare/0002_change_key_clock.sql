-- The key change judges expiry by clock_timestamp(), read in each
-- statement after the rows it judges are locked, instead of now(), the
-- transaction's start: a reservation that lapsed while the call waited for
-- a lock is then never moved, as every other operation refuses it too.
--
-- Two key changes sharing a key (a to b while b to a) would lock the two
-- rows in opposite orders and deadlock, so each change first takes a
-- transaction-scoped advisory lock per key, in one global order; changes
-- of unrelated keys do not wait for each other (a hash collision only makes
-- two changes wait), and the other operations lock one row each and so can
-- never close a cycle.
CREATE OR REPLACE FUNCTION {{prefix}}prepare_change_key(
	p_name TEXT, p_old_key TEXT, p_old_value BYTEA,
	p_new_key TEXT, p_new_value BYTEA, p_expires_at BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
	h_old BIGINT := hashtextextended('{{prefix}}prepare/' || p_name || '/' || p_old_key, 0);
	h_new BIGINT := hashtextextended('{{prefix}}prepare/' || p_name || '/' || p_new_key, 0);
BEGIN
	PERFORM pg_advisory_xact_lock(least(h_old, h_new));
	PERFORM pg_advisory_xact_lock(greatest(h_old, h_new));
	INSERT INTO {{prefix}}prepare AS p (name, key, value, expires_at)
	VALUES (p_name, p_new_key, p_new_value, p_expires_at)
	ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
	WHERE p.expires_at < floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	IF NOT FOUND THEN
		RETURN FALSE;
	END IF;
	PERFORM 1 FROM {{prefix}}prepare WHERE name = p_name AND key = p_old_key FOR UPDATE;
	DELETE FROM {{prefix}}prepare
	WHERE name = p_name AND key = p_old_key AND value = p_old_value
		AND expires_at >= floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'prepare: old key is not held by the old value' USING ERRCODE = 'FP001';
	END IF;
	RETURN TRUE;
END
$$;

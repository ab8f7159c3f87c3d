-- Idempotency records (package idempotency). Times are Unix microseconds
-- on the application's clock; a record is live while now < expires_at.
CREATE TABLE {{prefix}}idempotency_keys (
    tenant      TEXT    NOT NULL,
    operation   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('in_progress', 'done', 'failed', 'retryable')),
    fingerprint TEXT    NOT NULL,
    response    BLOB,
    expires_at  INTEGER NOT NULL,
    attempt     INTEGER NOT NULL CHECK (attempt > 0),
    PRIMARY KEY (tenant, operation, key)
);

-- Purge finds expired records without a scan.
CREATE INDEX {{prefix}}idempotency_keys_expiry ON {{prefix}}idempotency_keys (expires_at);

-- The last attempt number handed out. One counter for all keys, so a key
-- whose record was purged still gets a higher attempt than any earlier
-- owner held.
CREATE TABLE {{prefix}}idempotency_attempts (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);
INSERT INTO {{prefix}}idempotency_attempts (id, last) VALUES (1, 0);

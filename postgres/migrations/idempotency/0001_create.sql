-- Idempotency records (package idempotency). Expiry is judged by the
-- database's clock, clock_timestamp() read when a row is written (see
-- postgres.IdempotencyStore); a record is live while that clock is before
-- expires_at.

-- Attempt numbers: one sequence for all keys, so a key whose row was
-- purged still gets a higher attempt than any earlier owner held.
CREATE SEQUENCE {{prefix}}idempotency_attempts AS bigint;

CREATE TABLE {{prefix}}idempotency_keys (
    tenant      text        NOT NULL,
    operation   text        NOT NULL,
    key         text        NOT NULL,
    state       text        NOT NULL CHECK (state IN ('in_progress', 'done', 'failed', 'retryable')),
    fingerprint text        NOT NULL,
    response    bytea,
    expires_at  timestamptz NOT NULL,
    attempt     bigint      NOT NULL DEFAULT nextval('{{prefix}}idempotency_attempts') CHECK (attempt > 0),
    PRIMARY KEY (tenant, operation, key)
);

-- Purge finds expired records without a scan.
CREATE INDEX {{prefix}}idempotency_keys_expiry ON {{prefix}}idempotency_keys (expires_at);

-- The predecessor rule of the append contract: a stream of version N > 1
-- goes in only after version N - 1 of the same aggregate in the same
-- tenant. A BEFORE INSERT trigger checks it on the row itself; RAISE(IGNORE)
-- drops the row without an error, as ON CONFLICT DO NOTHING drops a row the
-- unique indexes refuse, so the append's plain INSERT … VALUES reports
-- "no row inserted" for either refusal and classifies it under the same
-- write lock. Dropped before the row takes a key, a refused row leaves no
-- gap in the log's positions. (An INSERT … SELECT WHERE EXISTS over the
-- same table, the check without a trigger, makes SQLite copy the row
-- through a temporary table on every append.)
CREATE TRIGGER "{{prefix}}streams_predecessor" BEFORE INSERT ON "{{prefix}}streams"
FOR EACH ROW WHEN NEW.version > 1 AND NOT EXISTS (
	SELECT 1 FROM "{{prefix}}streams"
	WHERE aggregate = NEW.aggregate AND aggregate_id = NEW.aggregate_id
		AND version = NEW.version - 1 AND tenant = NEW.tenant)
BEGIN
	SELECT RAISE(IGNORE);
END;

-- The request index now leads with request_id. Leading with the aggregate
-- type let the planner use it for lookups of one aggregate's versions
-- (matching its first and last columns and filtering the rest), which it
-- did whenever a plan was made while the table was small: every append
-- then read all of a type's entries. Led by request_id, it serves only
-- lookups that name the request, and the version index is the only one
-- that can serve the predecessor check.
DROP INDEX "{{prefix}}streams_req";
CREATE UNIQUE INDEX "{{prefix}}streams_req" ON "{{prefix}}streams" (request_id, aggregate, aggregate_id);

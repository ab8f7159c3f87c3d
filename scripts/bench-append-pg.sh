#!/usr/bin/env bash
# Append throughput of the PostgreSQL event store against the physical
# limit measured in the same run.
#
# For each number of concurrent writers (1, 8, 32) it runs pgbench with a
# single-row INSERT of the store's row shape into a table with the same two
# unique constraints (durable commits), then the Go benchmark
# BenchmarkAppend at the same concurrency, with coalescing off ("single":
# one statement and commit per stream) and on ("coalesced"), and prints
# both figures and their ratios. The store's table carries two more indexes
# than pgbench's (the global log's and the per-aggregate one), so its ratio
# includes their cost.
#
# Usage: FACTUM_POSTGRES_URL=postgres://... scripts/bench-append-pg.sh
# Tunables: CLIENTS ("1 8 32"), PGBENCH_SECONDS (10), BENCHTIME (5s).
set -euo pipefail

url=${FACTUM_POSTGRES_URL:?set FACTUM_POSTGRES_URL to a postgres:// URL}
clients=${CLIENTS:-"1 8 32"}
pgbench_seconds=${PGBENCH_SECONDS:-10}
benchtime=${BENCHTIME:-5s}
cd "$(dirname "$0")/.."

for tool in psql pgbench go; do
	command -v "$tool" >/dev/null || { echo "bench-append-pg: $tool is not installed" >&2; exit 1; }
done

schema="bench_pgbench_$$"
work=$(mktemp -d)
cleanup() {
	psql -qX "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

psql -qX "$url" -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE SCHEMA $schema;
CREATE TABLE $schema.streams (
	tx           xid8        NOT NULL DEFAULT pg_current_xact_id(),
	seq          bigint      GENERATED ALWAYS AS IDENTITY,
	aggregate    text        COLLATE "C" NOT NULL,
	aggregate_id text        COLLATE "C" NOT NULL,
	tenant       text        COLLATE "C" NOT NULL,
	version      integer     NOT NULL,
	stream_id    text        NOT NULL,
	command_id   text        NOT NULL,
	request_id   text        COLLATE "C" NOT NULL,
	owner_id     text        NOT NULL,
	header       json,
	create_time  timestamptz NOT NULL,
	events       json        NOT NULL,
	UNIQUE (aggregate, aggregate_id, version),
	UNIQUE (aggregate, aggregate_id, request_id)
);
SQL

# One stream per transaction: a new aggregate each time, the event the Go
# benchmark appends.
cat >"$work/insert.sql" <<SQL
INSERT INTO $schema.streams (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, create_time, events)
VALUES ('cart', gen_random_uuid()::text, 'default', 1, gen_random_uuid()::text, gen_random_uuid()::text, 'r-1', '', now(),
	'[{"id":"01970000-0000-7000-8000-000000000000","name":"item_added","sequence":1,"isLast":true,"body":{"sku":"sku-1","qty":2}}]');
SQL

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(psql -qXAt "$url" -c 'SHOW server_version'), synchronous_commit=$(psql -qXAt "$url" -c 'SHOW synchronous_commit')"
printf '%-8s %14s %16s %7s %16s %7s\n' writers pgbench_tx/s single_streams/s ratio coalesced/s ratio
for c in $clients; do
	threads=$(( c < 2 ? c : 2 ))
	tps=$(pgbench -n -c "$c" -j "$threads" -T "$pgbench_seconds" -f "$work/insert.sql" "$url" 2>/dev/null |
		awk '/^tps = / { print int($3) }')
	out=$(go test -run '^$' -bench "^BenchmarkAppend\$/^(single|coalesced)\$/^writers=$c\$" -benchtime "$benchtime" ./postgres/)
	single=$(awk '$1 ~ /^BenchmarkAppend\/single\// { for (i = 2; i < NF; i++) if ($(i+1) == "streams/s") print int($i) }' <<<"$out")
	coalesced=$(awk '$1 ~ /^BenchmarkAppend\/coalesced\// { for (i = 2; i < NF; i++) if ($(i+1) == "streams/s") print int($i) }' <<<"$out")
	if [[ -z "$tps" || -z "$single" || -z "$coalesced" ]]; then
		echo "bench-append-pg: a run failed at $c writers:" >&2
		echo "$out" >&2
		exit 1
	fi
	printf '%-8s %14d %16d %7.2f %16d %7.2f\n' "$c" "$tps" "$single" \
		"$(awk -v a="$single" -v b="$tps" 'BEGIN { print a / b }')" "$coalesced" \
		"$(awk -v a="$coalesced" -v b="$tps" 'BEGIN { print a / b }')"
done

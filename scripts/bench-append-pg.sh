#!/usr/bin/env bash
# Append throughput of the PostgreSQL event store against the physical
# limit measured in the same run.
#
# For each number of concurrent writers (CLIENTS) it alternates, for ROUNDS
# rounds: pgbench running a single-row INSERT of the store's row shape into
# a table with the same two unique constraints (durable commits, a new
# aggregate per row), then the Go benchmark BenchmarkAppend at the same
# concurrency with coalescing off ("single": one statement and commit per
# stream) and on ("coalesced"). Each round prints both figures and the
# ratios; the median ratio over the rounds is the result, so that each
# ratio compares runs made moments apart on a machine whose load changes.
#
# The store's table has two more indexes than pgbench's (the global log's
# and the per-aggregate one), and its statement checks the predecessor and
# returns the position, so the ratio includes their cost.
#
# With BASE set to a revision, each round also runs BenchmarkAppend of that
# revision (built from `git archive`, so the worktree is untouched) right
# after this one's, and prints its figures and ratios beside them: a
# before/after comparison made in the same minutes. The cpu columns are the
# coalesced benchmark's cpu-ns/op (the client process) and, where the
# revision reports it, server-cpu-ns/op (the writers' server processes).
#
# Usage: FACTUM_POSTGRES_URL=postgres://... scripts/bench-append-pg.sh
# Environment: CLIENTS ("1 8 32"), ROUNDS (3), PGBENCH_SECONDS (5),
# BENCHTIME (3s), BASE (unset).
# Goals (issue 16): single >= 0.8 of pgbench; coalesced at 32 writers >= 3x.
set -euo pipefail
cd "$(dirname "$0")/.."

url=${FACTUM_POSTGRES_URL:?set FACTUM_POSTGRES_URL to a postgres:// URL}
clients=${CLIENTS:-1 8 32}
rounds=${ROUNDS:-3}
pgbench_seconds=${PGBENCH_SECONDS:-5}
benchtime=${BENCHTIME:-3s}
base=${BASE:-}

for tool in psql pgbench go; do
	command -v "$tool" >/dev/null || { echo "bench-append-pg: $tool not found" >&2; exit 1; }
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
	UNIQUE (aggregate, request_id, aggregate_id)
);
SQL

# One stream per transaction, with the event the Go benchmark appends.
cat >"$work/insert.sql" <<SQL
INSERT INTO $schema.streams (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, create_time, events)
VALUES ('cart', gen_random_uuid()::text, 'default', 1, gen_random_uuid()::text, gen_random_uuid()::text, 'r-1', '', now(),
	'[{"id":"01970000-0000-7000-8000-000000000000","name":"item_added","sequence":1,"isLast":true,"body":{"sku":"sku-1","qty":2}}]');
SQL

# shellcheck source=scripts/bench-append-ratios.sh
. scripts/bench-append-ratios.sh
name=bench-append-pg
build_benchmarks postgres

echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), PostgreSQL $(psql -qXAt "$url" -c 'SHOW server_version' | cut -d' ' -f1), synchronous_commit=$(psql -qXAt "$url" -c 'SHOW synchronous_commit')"
header=(writers round pgbench_tx/s single/s ratio coalesced/s ratio cpu srv_cpu)
fmt='%-8s %-6s %13s %10s %6s %12s %6s %7s %7s'
if [[ -n "$base" ]]; then
	header+=(base_single/s ratio base_coal/s ratio base_cpu)
	fmt+=' %13s %6s %11s %6s %8s'
fi
# shellcheck disable=SC2059
printf "$fmt\n" "${header[@]}"
summary=()
for c in $clients; do
	start_writers
	for r in $(seq "$rounds"); do
		tps=$(pgbench -n -c "$c" -j "$(( c < 2 ? c : 2 ))" -T "$pgbench_seconds" -f "$work/insert.sql" "$url" 2>/dev/null |
			awk '/^tps = / { print int($3) }')
		out=$(run_append "$bin" postgres "$c")
		row=("$c" "$r" "$tps")
		add_figures "" "$out" "$tps" "$c" "$r"
		row+=("$(metric "$out" BenchmarkAppend/coalesced/ cpu-ns/op)" "$(metric "$out" BenchmarkAppend/coalesced/ server-cpu-ns/op)")
		if [[ -n "$base" ]]; then
			bout=$(run_append "$work/base.test" "$work/base/postgres" "$c")
			add_figures base_ "$bout" "$tps" "$c" "$r"
			row+=("$(metric "$bout" BenchmarkAppend/coalesced/ cpu-ns/op)")
		fi
		# shellcheck disable=SC2059
		printf "$fmt\n" "${row[@]}"
	done
	add_summary "$c"
done
print_summary pgbench

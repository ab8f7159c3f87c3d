#!/usr/bin/env bash
# Append throughput of the SQLite event store against the physical limit
# measured in the same run.
#
# For each number of concurrent writers (CLIENTS) it alternates, for ROUNDS
# rounds: the Go benchmark BenchmarkRawInsert (a single-row INSERT of the
# store's row shape into a table with the same two unique indexes, each
# committed on its own with synchronous=FULL, through the one write
# connection), then BenchmarkAppend at the same concurrency with coalescing
# off ("single": one commit per stream) and on ("coalesced"). Each round
# prints the figures and the ratios; the median ratio over the rounds is
# the result.
#
# With BASE set to a revision, each round also runs BenchmarkAppend of that
# revision (built from `git archive`, so the worktree is untouched) right
# after this one's, and prints its figures and ratios beside them: a
# before/after comparison made in the same minutes.
#
# Usage: scripts/bench-append-sqlite.sh
# Environment: CLIENTS ("1 8 32"), ROUNDS (3), BENCHTIME (3s), BASE (unset).
set -euo pipefail
cd "$(dirname "$0")/.."

clients=${CLIENTS:-1 8 32}
rounds=${ROUNDS:-3}
benchtime=${BENCHTIME:-3s}
base=${BASE:-}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/bench-append-ratios.sh
. scripts/bench-append-ratios.sh
name=bench-append-sqlite
build_benchmarks sqlite

echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), modernc.org/sqlite, WAL, synchronous=FULL"
fmt='%-8s %-6s %13s %17s %7s %14s %7s'
header=(writers round raw_insert/s single_streams/s ratio coalesced/s ratio)
if [[ -n "$base" ]]; then
	fmt+=' %14s %7s %14s %7s'
	header+=(base_single/s ratio base_coal/s ratio)
fi
# shellcheck disable=SC2059
printf "$fmt\n" "${header[@]}"
summary=()
for c in $clients; do
	start_writers
	for r in $(seq "$rounds"); do
		out=$(cd sqlite && "$bin" -test.run '^$' -test.bench "^BenchmarkRawInsert\$/^writers=$c\$" -test.benchtime "$benchtime")
		out+=$'\n'$(run_append "$bin" sqlite "$c")
		raw=$(metric "$out" "BenchmarkRawInsert/writers=$c-" streams/s)
		row=("$c" "$r" "$raw")
		add_figures "" "$out" "$raw" "$c" "$r"
		if [[ -n "$base" ]]; then
			bout=$(run_append "$work/base.test" "$work/base/sqlite" "$c")
			add_figures base_ "$bout" "$raw" "$c" "$r"
		fi
		# shellcheck disable=SC2059
		printf "$fmt\n" "${row[@]}"
	done
	add_summary "$c"
done
print_summary raw

#!/usr/bin/env bash
# Append throughput of the SQLite event store against the physical limit
# measured in the same run.
#
# For each number of concurrent writers (1, 8, 32) it runs the Go benchmark
# BenchmarkRawInsert (a single-row INSERT of the store's row shape into a
# table with the same two unique indexes, each committed on its own with
# synchronous=FULL, through the one write connection), then BenchmarkAppend
# at the same concurrency with coalescing off ("single": one transaction
# per stream) and on ("coalesced"), and prints the figures and the ratios.
#
# Usage: scripts/bench-append-sqlite.sh
# Tunables: CLIENTS ("1 8 32"), BENCHTIME (5s).
set -euo pipefail

clients=${CLIENTS:-"1 8 32"}
benchtime=${BENCHTIME:-5s}
cd "$(dirname "$0")/.."

# streams_per_s BENCH_OUTPUT NAME_PREFIX prints the streams/s metric of the
# benchmark line whose name starts with NAME_PREFIX.
streams_per_s() {
	awk -v p="$2" 'index($1, p) == 1 { for (i = 2; i < NF; i++) if ($(i+1) == "streams/s") print int($i) }' <<<"$1"
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, modernc.org/sqlite, WAL, synchronous=FULL"
printf '%-8s %12s %16s %7s %16s %7s\n' writers raw_insert/s single_streams/s ratio coalesced/s ratio
for c in $clients; do
	out=$(go test -run '^$' -bench "^BenchmarkRawInsert\$/^writers=$c\$" -benchtime "$benchtime" ./sqlite/)
	out+=$'\n'$(go test -run '^$' -bench "^BenchmarkAppend\$/^(single|coalesced)\$/^writers=$c\$" -benchtime "$benchtime" ./sqlite/)
	raw=$(streams_per_s "$out" "BenchmarkRawInsert/writers=$c")
	single=$(streams_per_s "$out" "BenchmarkAppend/single/writers=$c")
	coalesced=$(streams_per_s "$out" "BenchmarkAppend/coalesced/writers=$c")
	if [[ -z "$raw" || -z "$single" || -z "$coalesced" ]]; then
		echo "bench-append-sqlite: a run failed at $c writers:" >&2
		echo "$out" >&2
		exit 1
	fi
	printf '%-8s %12d %16d %7.2f %16d %7.2f\n' "$c" "$raw" "$single" \
		"$(awk -v a="$single" -v b="$raw" 'BEGIN { print a / b }')" "$coalesced" \
		"$(awk -v a="$coalesced" -v b="$raw" 'BEGIN { print a / b }')"
done

#!/usr/bin/env bash
# SendAndWait(SNAPSHOT) throughput against SendAndWait(PROCESSED), in
# memory (issue 4's goal: SNAPSHOT at least half of PROCESSED).
#
# Compiles the engine benchmarks once, then alternates, for ROUNDS rounds,
# BenchmarkSendAndWaitProcessedParallel and BenchmarkSendAndWaitSnapshot
# (and BenchmarkSendAndWaitProjected, a trivial projection, which shows
# what the branch-stage machinery costs by itself), each for BENCHTIME.
# Each round prints the figures and the SNAPSHOT / PROCESSED ratio of runs
# made moments apart; the median ratio is the result.
#
# Usage: scripts/bench-snapshot-ratio.sh
# Environment: ROUNDS (5), BENCHTIME (2s).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-2s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin="$work/engine.test"
go test -c -o "$bin" ./engine/

# run NAME prints "commands/s cpu-ns/op allocs/op" of one benchmark.
run() {
	(cd engine && "$bin" -test.run '^$' -test.bench "^$1\$" -test.benchtime "$benchtime" -test.benchmem) |
		awk -v n="$1" 'index($1, n) == 1 { for (i = 2; i < NF; i++) { if ($(i+1) == "cmds/s") c = int($i); if ($(i+1) == "cpu-ns/op") u = int($i); if ($(i+1) == "allocs/op") a = $i } print c, u, a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %10s %12s %10s %12s %10s %7s\n' round processed/s cpu-ns snapshot/s cpu-ns projected/s cpu-ns ratio
ratios=()
for r in $(seq "$rounds"); do
	read -r p pc _ < <(run BenchmarkSendAndWaitProcessedParallel)
	read -r s sc _ < <(run BenchmarkSendAndWaitSnapshot)
	read -r j jc _ < <(run BenchmarkSendAndWaitProjected)
	ratios+=("$(awk -v a="$s" -v b="$p" 'BEGIN { printf "%.2f", a / b }')")
	printf '%-6s %12d %10d %12d %10d %12d %10d %7s\n' "$r" "$p" "$pc" "$s" "$sc" "$j" "$jc" "${ratios[-1]}"
done
echo "median SNAPSHOT / PROCESSED: $(printf '%s\n' "${ratios[@]}" | median)"

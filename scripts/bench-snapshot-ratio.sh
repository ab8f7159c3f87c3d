#!/usr/bin/env bash
# SendAndWait(SNAPSHOT) throughput against SendAndWait(PROCESSED), in
# memory (issue 16's goal: SNAPSHOT at least 0.6x PROCESSED, PROCESSED at
# least 200,000 commands/s on a quiet machine).
#
# Compiles the engine benchmarks once per revision (the worktree, and BASE
# when set), then alternates, for ROUNDS rounds (the revisions alternating
# within each round), BenchmarkSendAndWaitProcessedParallel and
# BenchmarkSendAndWaitSnapshot (and BenchmarkSendAndWaitProjected, a
# trivial projection, which shows what the branch-stage machinery costs by
# itself), each for BENCHTIME. Each round prints the figures and the
# SNAPSHOT / PROCESSED ratio of runs made moments apart, of throughput and
# of CPU per command (PROCESSED's cpu-ns/op over SNAPSHOT's); the median
# ratios are the result.
#
# Usage: scripts/bench-snapshot-ratio.sh
# Environment: ROUNDS (5), BENCHTIME (2s), BASE (a revision to compare,
# such as 803250d; unset: the worktree only).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-2s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
build_tests engine "${BASE:-}"

# run BIN NAME prints "commands/s cpu-ns/op allocs/op" of one benchmark.
run() {
	(cd engine && "$work/$1.test" -test.run '^$' -test.bench "^$2\$" -test.benchtime "$benchtime" -test.benchmem) |
		awk -v n="$2" 'index($1, n) == 1 { for (i = 2; i < NF; i++) { if ($(i+1) == "cmds/s") c = int($i); if ($(i+1) == "cpu-ns/op") u = int($i); if ($(i+1) == "allocs/op") a = $i } print c, u, a }'
}

echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-6s %12s %10s %7s %12s %10s %7s %12s %10s %7s %9s\n' rev round processed/s cpu-ns allocs snapshot/s cpu-ns allocs projected/s cpu-ns ratio cpu-ratio
declare -A ratios cpuratios
for r in $(seq "$rounds"); do
	for b in "${bins[@]}"; do
		read -r p pc pa < <(run "$b" BenchmarkSendAndWaitProcessedParallel)
		read -r s sc sa < <(run "$b" BenchmarkSendAndWaitSnapshot)
		read -r j jc _ < <(run "$b" BenchmarkSendAndWaitProjected)
		throughput=$(ratio "$s" "$p")
		cpuratio=$(ratio "$pc" "$sc")
		ratios[$b]+="$throughput "
		cpuratios[$b]+="$cpuratio "
		printf '%-5s %-6s %12d %10d %7s %12d %10d %7s %12d %10d %7s %9s\n' "$b" "$r" "$p" "$pc" "$pa" "$s" "$sc" "$sa" "$j" "$jc" "$throughput" "$cpuratio"
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${bins[@]}"; do
	echo "$b: median SNAPSHOT / PROCESSED: $(printf '%s\n' ${ratios[$b]} | median) (throughput), $(printf '%s\n' ${cpuratios[$b]} | median) (CPU per command)"
done

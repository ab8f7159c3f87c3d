#!/usr/bin/env bash
# Observability overhead of SendAndWait(PROCESSED) in memory (issue 21's
# goal: metrics with tracing sampled at 0 at least 0.95x of off, every
# trace recorded to an in-memory exporter at least 0.6x).
#
# Compiles the telemetry benchmarks once per revision (the worktree, and
# BASE when set), then runs BenchmarkSendAndWait's modes for ROUNDS rounds,
# the revisions alternating, each mode for BENCHTIME commands. A round's
# ratio is off's figure over the mode's, of the CPU per command
# (cpu-ns/op: the process's getrusage, every thread) and of wall time, so
# each ratio compares runs made moments apart; the medians over the rounds
# are the result, with the CPU ratios' range and the median bytes a
# command allocates. Each process first runs
# the modes WARMUP times unrecorded: the first benchmark in a process pays
# for growing the heap from nothing (page faults, counted as system CPU),
# which would inflate off's figure, always the first, and every ratio.
#
# Usage: scripts/bench-telemetry-ratio.sh
# Environment: ROUNDS (5), BENCHTIME (50000x), MODES (off|metrics|traced|floor), WARMUP (1),
# BASE (a revision to compare, such as 4516255; unset: the worktree only).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-50000x}
modes=${MODES:-off|metrics|traced|floor}
warmup=${WARMUP:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
build_tests telemetry "${BASE:-}"

for r in $(seq "$rounds"); do
	for b in "${bins[@]}"; do
		(cd telemetry && "$work/$b.test" -test.run '^$' -test.bench "BenchmarkSendAndWait/($modes)\$" -test.benchtime "$benchtime" -test.benchmem -test.count $((warmup + 1))) |
			awk -v b="$b" -v r="$r" -v w="$warmup" '/^BenchmarkSendAndWait\// { split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); if (seen[n[2]]++ == w) print b, r, n[2], $3, $5, $(NF-3), $(NF-1) }'
	done
done >"$work/runs"

# runs: revision round mode wall-ns/op cpu-ns/op B/op allocs/op
printf "%-5s %-15s %6s %12s %14s %15s %13s %7s %7s\n" rev mode rounds cpu-ns/op "x off (cpu)" "cpu range" "x off (wall)" B/op allocs
awk '
	{ wall[$1, $2, $3] = $4; cpu[$1, $2, $3] = $5; bytes[$1, $2, $3] = $6; allocs[$1, $3] = $7; revs[$1]; rounds[$2]; if (!($3 in seen)) { seen[$3]; order[++nm] = $3 } }
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		for (b in revs) for (k = 1; k <= nm; k++) {
			m = order[k]; n = 0; delete c; delete w; delete u; delete by
			for (r in rounds) {
				if (cpu[b, r, "off"] == "" || cpu[b, r, m] == "") continue
				n++; c[n] = cpu[b, r, "off"] / cpu[b, r, m]; w[n] = wall[b, r, "off"] / wall[b, r, m]; u[n] = cpu[b, r, m]; by[n] = bytes[b, r, m]
			}
			if (n == 0) continue
			lo = c[1]; hi = c[1]; for (i = 2; i <= n; i++) { if (c[i] < lo) lo = c[i]; if (c[i] > hi) hi = c[i] }
			printf "%-5s %-15s %6d %12.0f %14.3f %7.2f-%-7.2f %13.3f %7.0f %7s\n", b, m, n, median(u, n), median(c, n), lo, hi, median(w, n), median(by, n), allocs[b, m]
		}
	}' "$work/runs" | sort -k1,1 -s

#!/usr/bin/env bash
# Compares factum's Redis prepare key with redis-benchmark in one run, at the
# same client counts: BenchmarkRedisPrepare (one SET NX PXAT per operation,
# through prepare.Key: JSON encoding, validation, go-redis) against
# redis-benchmark sending SET NX PX with a value of the same size. The two
# alternate for ROUNDS rounds, so that each ratio compares runs made moments
# apart on a machine whose load changes; the median ratio is the result.
# Also runs BenchmarkRedisPrepareRollback (SET NX PXAT + EVALSHA per pair).
#
# Usage: scripts/bench-prepare-redis.sh
# Environment: FACTUM_REDIS_URL (default redis://127.0.0.1:6379/0),
# CLIENTS ("1 32"), ROUNDS (3), BENCHTIME (1s), REQUESTS (50000).
# Goal: median ratio >= 0.7.
set -euo pipefail
cd "$(dirname "$0")/.."

url=${FACTUM_REDIS_URL:-redis://127.0.0.1:6379/0}
clients=${CLIENTS:-1 32}
rounds=${ROUNDS:-3}
benchtime=${BENCHTIME:-1s}
requests=${REQUESTS:-50000}
export FACTUM_REDIS_URL=$url

hostport=${url#redis://}
hostport=${hostport#*@}
dbnum=0
case $hostport in */*) dbnum=${hostport#*/}; dbnum=${dbnum:-0} ;; esac
hostport=${hostport%%/*}
host=${hostport%:*}
port=${hostport##*:}
[ "$port" = "$host" ] && port=6379

command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found" >&2; exit 1; }

# Compile once, so that rounds measure only running.
bin=$(mktemp -d)/redis.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./redis/

# metric prints the number before unit on the benchmark line matching name.
metric() { awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }'; }

gobench() { # name clients
	(cd redis && "$bin" -test.run '^$' -test.bench "^$1\$/^goroutines=$2\$" -test.benchtime "$benchtime")
}

redisbench() { # clients
	# A value of the size of the Go benchmark's JSON value (about 30 bytes).
	redis-benchmark -h "$host" -p "$port" --dbnum "$dbnum" -c "$1" -n "$requests" -r 100000000 --csv \
		SET "factum:bench:rb:__rand_int__" "u0123456789ab-1234567-padding" NX PX 60000 |
		tail -n 1 | awk -F'","' '{ print $2 }'
}

summary=$(printf '%-8s %-6s %14s %16s %8s' clients round "factum ops/s" "redis-bench rps" ratio)
for c in $clients; do
	ratios=()
	for r in $(seq "$rounds"); do
		out=$(gobench BenchmarkRedisPrepare "$c")
		echo "$out" | grep '^Benchmark'
		ops=$(echo "$out" | metric "^BenchmarkRedisPrepare/goroutines=${c}-" "ops/s")
		rps=$(redisbench "$c")
		echo "redis-benchmark -c $c SET NX PX: $rps requests per second"
		ratio=$(awk -v a="$ops" -v b="$rps" 'BEGIN { printf "%.2f", a / b }')
		ratios+=("$ratio")
		summary+=$'\n'$(printf '%-8s %-6s %14.0f %16.0f %8s' "$c" "$r" "$ops" "$rps" "$ratio")
	done
	median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	summary+=$'\n'"$(printf '%-8s %-6s %40s %8s' "$c" median "" "$median")"
	out=$(gobench BenchmarkRedisPrepareRollback "$c")
	echo "$out" | grep '^Benchmark'
	pairs=$(echo "$out" | metric "^BenchmarkRedisPrepareRollback/goroutines=${c}-" "pairs/s")
	summary+=$'\n'"$(printf '%-8s prepare+rollback pairs/s: %.0f' "$c" "$pairs")"
done
echo
echo "$summary"
echo "ratio = factum Prepare ops/s / redis-benchmark SET NX PX requests/s, measured back to back (goal: median >= 0.7)"

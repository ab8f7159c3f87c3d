#!/usr/bin/env bash
# Compares factum's Redis prepare key with redis-benchmark in one run, at the
# same client counts: BenchmarkRedisPrepare (one SET NX PXAT per operation,
# through prepare.Key: JSON encoding, validation, go-redis) against
# redis-benchmark sending SET NX PX with a value of the same size. Also runs
# BenchmarkRedisPrepareRollback (a SET NX PXAT and an EVALSHA per pair).
#
# Usage: scripts/bench-prepare-redis.sh   (FACTUM_REDIS_URL, CLIENTS="1 32",
#        BENCHTIME=2s, REQUESTS=100000 may be set). Goal: ratio >= 0.7.
set -euo pipefail
cd "$(dirname "$0")/.."

url=${FACTUM_REDIS_URL:-redis://127.0.0.1:6379/0}
clients=${CLIENTS:-1 32}
benchtime=${BENCHTIME:-2s}
requests=${REQUESTS:-100000}
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

# metric prints the number before unit on the benchmark line for name.
metric() { awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }'; }

rows=$(printf '%-8s %16s %16s %8s %18s %14s' clients "factum ops/s" "redis-bench rps" ratio "prepare+rollback" "ops ratio")
for c in $clients; do
	out=$(go test -run '^$' -bench "^BenchmarkRedisPrepare(Rollback)?\$/^goroutines=${c}\$" -benchtime "$benchtime" ./redis/)
	echo "$out" | grep '^Benchmark'
	ops=$(echo "$out" | metric "^BenchmarkRedisPrepare/goroutines=${c}-" "ops/s")
	pairs=$(echo "$out" | metric "^BenchmarkRedisPrepareRollback/goroutines=${c}-" "pairs/s")
	# A value of the size of the Go benchmark's JSON value (about 30 bytes).
	rps=$(redis-benchmark -h "$host" -p "$port" --dbnum "$dbnum" -c "$c" -n "$requests" -r 100000000 --csv \
		SET "factum:bench:rb:__rand_int__" "u0123456789ab-1234567-padding" NX PX 60000 |
		tail -n 1 | awk -F'","' '{ print $2 }')
	echo "redis-benchmark -c $c SET NX PX: $rps requests per second"
	rows+=$'\n'$(awk -v c="$c" -v ops="$ops" -v rps="$rps" -v pairs="$pairs" 'BEGIN {
		printf "%-8s %16.0f %16.0f %8.2f %18.0f %14.2f", c, ops, rps, ops / rps, pairs, 2 * pairs / rps
	}')
done
echo
echo "$rows"
echo "ratio: factum Prepare ops/s / redis-benchmark SET NX PX rps; ops ratio: 2 x pairs/s / rps (goal for ratio: >= 0.7)"

#!/usr/bin/env bash
# The contention benchmark's paired rounds on two NATS servers in turns:
# the one FACTUM_NATS_URL names (the machine's) and a current one of
# go.mod's version (see start_current_nats in scripts/bench-lib.sh). Each
# series runs BenchmarkContendedAggregate/postgresql/paired once per
# server; prints each series' two ÷ one and where the rounds of one
# instance and of two went (admission, writer, tail, in ms: see the
# benchmark's anatomy), then the medians per server.
#   scripts/bench-contended-servers.sh [SERIES]
# Environment: FACTUM_POSTGRES_URL and FACTUM_NATS_URL (required),
# BENCHTIME [20x].
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
: "${FACTUM_POSTGRES_URL:?set FACTUM_POSTGRES_URL}" "${FACTUM_NATS_URL:?set FACTUM_NATS_URL}"
series="${1:-3}"; benchtime="${BENCHTIME:-20x}"
machine="$FACTUM_NATS_URL"
work="$(mktemp -d)"
trap 'stop_current_nats; rm -rf "$work"' EXIT
NATS_SERVER=current start_current_nats
current="$FACTUM_NATS_URL"
build_tests nats ""

# run LABEL URL runs one series against the server at URL and appends
# "LABEL two÷one one-admit one-writer one-tail two-admit two-writer
# two-tail" to $work/results.
run() {
  FACTUM_NATS_URL="$2" "$work/new.test" -test.run '^$' -test.bench 'BenchmarkContendedAggregate/postgresql/paired$' -test.benchtime "$benchtime" 2>&1 |
    grep '^Benchmark' | awk -v l="$1" '{ for (i = 1; i <= NF; i++) m[$i] = $(i-1) }
      END { print l, m["two÷one"], m["one-admit-ms"], m["one-writer-ms"], m["one-tail-ms"], m["two-admit-ms"], m["two-writer-ms"], m["two-tail-ms"] }' |
    tee -a "$work/results"
}

echo "series: label two÷one one(admit writer tail) two(admit writer tail), ms a round"
for ((s = 1; s <= series; s++)); do
  if ((s % 2)); then run machine "$machine"; run current "$current"; else run current "$current"; run machine "$machine"; fi
done
echo "medians over $series series:"
for label in machine current; do
  line="$label"
  for col in 2 3 4 5 6 7 8; do
    line+=" $(awk -v l="$label" -v c="$col" '$1 == l { print $c }' "$work/results" | median)"
  done
  echo "$line"
done

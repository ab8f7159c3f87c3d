#!/usr/bin/env bash
# Checks factum bench against wrk on the same route (POST
# /cart/{id}/add_item, every request a new append) at the same
# concurrency, alternating the two ROUNDS times against one factum serve,
# and prints each pair's throughput and their ratio (bench / wrk). On a
# busy machine compare the same-run ratios, not the absolute figures.
#   scripts/bench-vs-wrk.sh [CONCURRENCY] [SECONDS] [ROUNDS]
# STORE=--memory (default: a temporary SQLite data dir), WAIT=PROCESSED.
set -euo pipefail
cd "$(dirname "$0")/.."
c="${1:-16}"; secs="${2:-8}"; rounds="${3:-3}"
wait_stage="${WAIT:-PROCESSED}"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)"; exit 1; }
tmp="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/factum" ./cmd/factum
store="${STORE:---data-dir $tmp/data}"
# shellcheck disable=SC2086
"$tmp/factum" serve $store --addr 127.0.0.1:0 >"$tmp/serve.log" 2>&1 &
pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^factum: listening on \(http:[^ ]*\).*/\1/p' "$tmp/serve.log" | head -1)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/serve.log"; exit 1; }
# Warm up; then both run for SECONDS per round.
"$tmp/factum" bench --url "$url" --concurrency "$c" --total 2000 --wait "$wait_stage" --quiet --allow-failures >/dev/null
threads=$(( c < 2 ? 1 : 2 ))
printf 'concurrency %s, wait %s, %s rounds of %ss each (wrk -t %s)\n' "$c" "$wait_stage" "$rounds" "$secs" "$threads"
printf '%-6s %12s %12s %8s\n' round bench wrk ratio
ratios=()
bsum=0; wsum=0
for r in $(seq 1 "$rounds"); do
  run_bench() {
    b="$("$tmp/factum" bench --url "$url" --concurrency "$c" --duration "${secs}s" --total 0 --wait "$wait_stage" --quiet --json --allow-failures)"
    bops="$(printf '%s' "$b" | sed -n 's/.*"opsPerSec": \([0-9.]*\).*/\1/p' | head -1)"
    bfail="$(printf '%s' "$b" | sed -n 's/.*"failed": \([0-9]*\).*/\1/p' | head -1)"
    bdup="$(printf '%s' "$b" | sed -n 's/.*"duplicates": \([0-9]*\).*/\1/p' | head -1)"
  }
  run_wrk() {
    w="$(RUN="$(od -An -N8 -tx8 /dev/urandom | tr -d " ")" WAIT="$wait_stage" wrk -t "$threads" -c "$c" -d "${secs}s" --timeout 30s -s scripts/wrk-add-item.lua "$url")"
    wops="$(printf '%s\n' "$w" | awk '/Requests\/sec/ { print $2 }')"
    wbad="$(printf '%s\n' "$w" | awk '/Non-2xx/ { print $5 }')"
  }
  # Alternate which goes first, so neither always follows the other.
  if [ $((r % 2)) -eq 1 ]; then run_bench; run_wrk; else run_wrk; run_bench; fi
  ratio="$(awk -v a="$bops" -v b="$wops" 'BEGIN { print a / b }')"
  ratios+=("$ratio")
  bsum="$(awk -v a="$bsum" -v b="$bops" 'BEGIN { print a + b }')"
  wsum="$(awk -v a="$wsum" -v b="$wops" 'BEGIN { print a + b }')"
  printf '%-6s %12.0f %12.0f %8.3f   (bench failed %s dup %s; wrk non-2xx %s)\n' "$r" "$bops" "$wops" "$ratio" "$bfail" "$bdup" "${wbad:-0}"
done
printf 'all rounds: bench %.0f, wrk %.0f commands/s on average, ratio %.3f\n' \
  "$(awk -v a="$bsum" -v n="$rounds" 'BEGIN { print a / n }')" "$(awk -v a="$wsum" -v n="$rounds" 'BEGIN { print a / n }')" \
  "$(awk -v a="$bsum" -v b="$wsum" 'BEGIN { print a / b }')"
printf 'median ratio bench/wrk: %s\n' "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')"

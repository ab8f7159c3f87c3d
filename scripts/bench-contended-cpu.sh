#!/usr/bin/env bash
# What the crossing costs under contention, and what taking that much CPU
# from one instance does to it: BenchmarkContendedAggregate on PostgreSQL
# through one instance and through two (each fleet alone, in turns), the
# NATS server's CPU during each (from /proc), and one instance again with
# a loop beside it spinning for a share of every 10 ms of one core
# (SPINS, shares of a core). Prints each case's commands/s and this
# process's CPU a command, and the medians over ROUNDS.
#   scripts/bench-contended-cpu.sh
# Environment: FACTUM_POSTGRES_URL and FACTUM_NATS_URL (required; the NATS
# server a process on this machine; with NATS_SERVER=current a NATS server
# of go.mod's version runs instead: see scripts/bench-lib.sh), ROUNDS [3],
# SPINS ["0.2 0.35 1"], BENCHTIME [40x].
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
: "${FACTUM_POSTGRES_URL:?set FACTUM_POSTGRES_URL}"
[[ "${NATS_SERVER:-}" == current ]] || : "${FACTUM_NATS_URL:?set FACTUM_NATS_URL, or NATS_SERVER=current}"
rounds="${ROUNDS:-3}"; spins="${SPINS:-0.2 0.35 1}"; benchtime="${BENCHTIME:-40x}"
command -v python3 >/dev/null || { echo "bench-contended-cpu: python3 is needed" >&2; exit 1; }
work="$(mktemp -d)"
spinner=""
trap '[[ -n "$spinner" ]] && kill "$spinner" 2>/dev/null; stop_current_nats; rm -rf "$work"' EXIT
start_current_nats
nats_pid="${nats_server_pid:-$(pgrep -x nats-server | head -1 || true)}"
[[ -n "$nats_pid" ]] || { echo "bench-contended-cpu: no nats-server process on this machine" >&2; exit 1; }
build_tests nats ""

# ticks prints the NATS server's CPU so far, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$nats_pid/stat"; }

# spin SHARE starts a loop busy for SHARE of every 10 ms of one core.
spin() {
  python3 - "$1" <<'PY' &
import sys, time
on = float(sys.argv[1]) * 0.01
while True:
    t = time.monotonic()
    while time.monotonic() - t < on:
        pass
    if on < 0.01:
        time.sleep(0.01 - on)
PY
  spinner=$!
}

# run CASE LABEL runs one case and appends "LABEL cmd/s cpu-ns/cmd
# nats-ticks" to $work/results.
run() {
  local before after out
  before="$(ticks)"
  out="$("$work/new.test" -test.run '^$' -test.bench "BenchmarkContendedAggregate/postgresql/$1\$" -test.benchtime "$benchtime" 2>&1 | grep '^Benchmark')"
  after="$(ticks)"
  echo "$out" | awk -v l="$2" -v t="$((after - before))" '{ for (i = 1; i <= NF; i++) { if ($i == "cmd/s") c = $(i-1); if ($i == "cpu-ns/cmd") u = $(i-1) } } END { print l, c, u, t }' | tee -a "$work/results"
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r (load $(cut -d' ' -f1 /proc/loadavg))"
  run one-instance-nats one
  run two-instances two
  for s in $spins; do
    spin "$s"
    run one-instance-nats "one+spin$s"
    kill "$spinner"; wait "$spinner" 2>/dev/null || true; spinner=""
  done
done
echo "medians over $rounds rounds (case, commands/s, cpu-ns a command, NATS server ticks):"
for label in one two $(for s in $spins; do echo "one+spin$s"; done); do
  c="$(awk -v l="$label" '$1 == l { print $2 }' "$work/results" | median)"
  u="$(awk -v l="$label" '$1 == l { print $3 }' "$work/results" | median)"
  t="$(awk -v l="$label" '$1 == l { print $4 }' "$work/results" | median)"
  echo "$label $c $u $t"
done
one="$(awk '$1 == "one" { print $2 }' "$work/results" | median)"
for label in two $(for s in $spins; do echo "one+spin$s"; done); do
  echo "$label ÷ one: $(ratio "$(awk -v l="$label" '$1 == l { print $2 }' "$work/results" | median)" "$one")"
done

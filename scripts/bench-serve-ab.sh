#!/usr/bin/env bash
# Compares two builds of `factum serve` in the same run: the worktree
# against REV (a git revision), alternating ROUNDS times, each round a
# fresh SQLite data directory (or a scratch PostgreSQL database with
# STORE=pg) driven by `factum bench` for SECS at CONCURRENCY. Prints each
# round's commands/s and the server's CPU per command (user+system time of
# the serve process over the run, from /proc), on PostgreSQL the
# database's commits and checkpoint rows written per command
# (pg_stat_database, pg_stat_user_tables), and the medians: on a
# loaded machine the CPU and the commits per command are the steadier
# figures.
#   scripts/bench-serve-ab.sh REV
# Environment: ROUNDS [3], SECS [5], CONCURRENCY [64], WAIT [PROCESSED],
# STORE [sqlite | pg (needs FACTUM_POSTGRES_URL and psql)].
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?usage: scripts/bench-serve-ab.sh REV}"
rounds="${ROUNDS:-3}"; secs="${SECS:-5}"; c="${CONCURRENCY:-64}"; stage="${WAIT:-PROCESSED}"; store="${STORE:-sqlite}"
tmp="$(mktemp -d)"
pid=""; scratch=""
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  [ -n "$scratch" ] && psql -q "$FACTUM_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $scratch WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/old-src"
git archive "$rev" | tar -x -C "$tmp/old-src"
(cd "$tmp/old-src" && go build -o "$tmp/old" ./cmd/factum)
go build -o "$tmp/new" ./cmd/factum
tick="$(getconf CLK_TCK)"

# one BIN: a fresh serve of BIN, a warm-up, then the measured bench run;
# prints "ops cpu_us_per_command".
one() {
  local bin="$1" url="" args before after ops n
  if [ "$store" = pg ]; then
    scratch="factum_ab_$$_$RANDOM"
    psql -q "$FACTUM_POSTGRES_URL" -c "CREATE DATABASE $scratch" >/dev/null
    args=(--postgres-url "$(printf '%s' "$FACTUM_POSTGRES_URL" | sed -E "s#^(postgres(ql)?://[^/]*/)[^?]*#\1$scratch#")")
  else
    rm -rf "$tmp/data"
    args=(--data-dir "$tmp/data")
  fi
  "$bin" serve "${args[@]}" --addr 127.0.0.1:0 --log-level warn >"$tmp/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do
    url="$(sed -n 's/^factum: listening on \(http:[^ ]*\).*/\1/p' "$tmp/serve.log" | head -1)"
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$tmp/serve.log" >&2; exit 1; }
  "$tmp/new" bench --url "$url" --concurrency 16 --total 1000 --wait "$stage" --quiet --allow-failures >/dev/null
  before="$(awk '{ print $14 + $15 }' "/proc/$pid/stat")"
  commits0="$(commits)"
  out="$("$tmp/new" bench --url "$url" --concurrency "$c" --duration "${secs}s" --total 0 --wait "$stage" --quiet --json --allow-failures)"
  after="$(awk '{ print $14 + $15 }' "/proc/$pid/stat")"
  sleep 1 # the statistics reach pg_stat_database within a second
  commits1="$(commits)"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  # one runs in a subshell ($(one …)): it drops its own database.
  [ "$store" = pg ] && psql -q "$FACTUM_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $scratch WITH (FORCE)" >/dev/null
  ops="$(printf '%s' "$out" | sed -n 's/.*"opsPerSec": \([0-9.e+]*\).*/\1/p' | head -1)"
  n="$(printf '%s' "$out" | sed -n 's/.*"succeeded": \([0-9]*\).*/\1/p' | head -1)"
  awk -v o="$ops" -v a="$before" -v b="$after" -v n="$n" -v t="$tick" -v c0="$commits0" -v c1="$commits1" \
    'BEGIN { n = (n > 0 ? n : 1); split(c0, x, " "); split(c1, y, " ");
      printf "%.0f %.0f %.2f %.3f\n", o, (b - a) / t * 1e6 / n, (y[1] - x[1]) / n, (y[2] - x[2]) / n }'
}

# commits: the scratch database's committed transactions (every statement
# outside a transaction counts, reads too) and the rows written to its
# checkpoint tables so far ("0 0" on SQLite).
commits() {
  if [ "$store" = pg ]; then
    psql -qAt -F' ' "$(printf '%s' "$FACTUM_POSTGRES_URL" | sed -E "s#^(postgres(ql)?://[^/]*/)[^?]*#\1$scratch#")" -c \
      "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
        (SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE '%checkpoints')"
  else
    echo 0 0
  fi
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf '%s c=%s %s, %s rounds of %ss; old = %s; load average %s\n' "$store" "$c" "$stage" "$rounds" "$secs" "$rev" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %9s %9s %8s %9s | %9s %9s %8s %9s\n' round "old cmd/s" "cpu µs" commits "ckpt rows" "new cmd/s" "cpu µs" commits "ckpt rows"
: >"$tmp/r"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then o="$(one "$tmp/old")"; n="$(one "$tmp/new")"; else n="$(one "$tmp/new")"; o="$(one "$tmp/old")"; fi
  # shellcheck disable=SC2086
  printf '%-5s %9s %9s %8s %9s | %9s %9s %8s %9s\n' "$r" $o $n
  echo "$o $n" >>"$tmp/r"
done
col() { awk -v i="$1" '{ print $i }' "$tmp/r" | median; }
printf 'median per command: old %s cmd/s, %s µs CPU, %s commits, %s checkpoint rows; new %s cmd/s, %s µs CPU, %s commits, %s checkpoint rows\n' \
  "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)" "$(col 8)"
# Each round's old and new run back to back under about the same load,
# which drifts between rounds on a shared machine: the median of the
# rounds' own ratios is steadier than the ratio of the medians.
printf 'median of the rounds'"'"' new/old: %s cmd/s, %s CPU per command\n' \
  "$(awk '{ print $5 / $1 }' "$tmp/r" | median)" "$(awk '{ print $6 / $2 }' "$tmp/r" | median)"
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# End-to-end figures of `factum serve`: runs the service on SQLite and on
# PostgreSQL (a fresh database, then the same one after SEED_STREAMS streams
# seeded with SQL), drives it with `factum bench` and with wrk, alternating,
# at each concurrency and wait stage, and prints throughput, p50/p99 and
# the snapshotter's lag (factum_consumer_lag_seconds from /metrics, sampled
# every half second during each point, and the time it takes to catch up
# after it) and, on PostgreSQL, the database's commits per command
# (pg_stat_database: the append, the consumers' checkpoints, snapshots and
# everything else serve commits).
#
#   FACTUM_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable scripts/bench-serve.sh
#   QUICK=1 scripts/bench-serve.sh          # 3 s per point, one round
#
# Environment (defaults in brackets):
#   SECS [10; QUICK 3]       length of one bench or wrk run
#   ROUNDS [5; QUICK 1]      bench/wrk pairs per point; medians are printed
#   STORES [sqlite pg pg-seeded]; pg* need FACTUM_POSTGRES_URL and psql
#   STAGES [PROCESSED SNAPSHOT]
#   CONCURRENCY [1 16 64]
#   SEED_STREAMS [1000000]   streams seeded before the pg-seeded points
#   PPROF=DIR                profile serve for the c=64 PROCESSED point of each
#                            store (DIR/<store>.cpu.pprof, 5 s into the bench run)
#
# The PostgreSQL points run in a scratch database the script creates and
# drops. Client, server and database share the machine: compare the
# same-run ratios (bench/wrk, SNAPSHOT/PROCESSED), and read the load
# average printed with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."

quick="${QUICK:-0}"
if [ "$quick" = 1 ]; then secs="${SECS:-3}"; rounds="${ROUNDS:-1}"; else secs="${SECS:-10}"; rounds="${ROUNDS:-5}"; fi
stores="${STORES:-sqlite pg pg-seeded}"
stages="${STAGES:-PROCESSED SNAPSHOT}"
concurrencies="${CONCURRENCY:-1 16 64}"
seed="${SEED_STREAMS:-1000000}"
pprof_dir="${PPROF:-}"

command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed: apt-get install -y curl" >&2; exit 1; }
case " $stores " in
*" pg"*)
  [ -n "${FACTUM_POSTGRES_URL:-}" ] || { echo "the pg stores need FACTUM_POSTGRES_URL" >&2; exit 1; }
  command -v psql >/dev/null || { echo "the pg stores need psql: apt-get install -y postgresql-client" >&2; exit 1; }
  ;;
esac

tmp="$(mktemp -d)"
pid=""
scratch=""
stop_serve() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
cleanup() {
  stop_serve
  if [ -n "$scratch" ]; then psql -q "$FACTUM_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $scratch WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/factum" ./cmd/factum

# start_serve ARGS...: serve on a free port; sets url (and pprof_addr).
start_serve() {
  local extra=()
  pprof_addr=""
  if [ -n "$pprof_dir" ]; then
    pprof_addr="127.0.0.1:$(( 20000 + RANDOM % 20000 ))"
    extra=(--pprof "$pprof_addr")
  fi
  "$tmp/factum" serve "$@" "${extra[@]}" --addr 127.0.0.1:0 --log-level warn >"$tmp/serve.log" 2>&1 &
  pid=$!
  url=""
  for _ in $(seq 1 200); do
    url="$(sed -n 's/^factum: listening on \(http:[^ ]*\).*/\1/p' "$tmp/serve.log" | head -1)"
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$tmp/serve.log" >&2
  exit 1
}

# lag_seconds: the snapshotter's factum_consumer_lag_seconds now.
lag_seconds() {
  curl -fs "$url/metrics" 2>/dev/null | awk '/^factum_consumer_lag_seconds\{group="[^"]*snapshotter"\}/ { print $2; found = 1 } END { if (!found) print 0 }'
}
lag_streams() {
  curl -fs "$url/metrics" 2>/dev/null | awk '/^factum_consumer_lag_streams\{group="[^"]*snapshotter"\}/ { print $2; found = 1 } END { if (!found) print 0 }'
}

# sample_lag FILE: writes the lag every half second until killed.
sample_lag() { while :; do lag_seconds >>"$1"; sleep 0.5; done; }

# catch_up: waits (up to 60 s) until the snapshotter has no stream left;
# prints how long that took.
catch_up() {
  local start end
  start="$(date +%s.%N)"
  for _ in $(seq 1 600); do
    [ "$(lag_streams)" = 0 ] && break
    sleep 0.1
  done
  end="$(date +%s.%N)"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# wrk_ms VALUE: a wrk latency (such as 812.00us, 1.23ms, 1.01s) in ms.
wrk_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /m$/) n *= 60000; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }

# run_bench C STAGE: one bench run; sets b_ops b_p50 b_p99 b_bad.
run_bench() {
  local out
  out="$("$tmp/factum" bench --url "$url" --concurrency "$1" --duration "${secs}s" --total 0 --wait "$2" --quiet --json --allow-failures)"
  b_ops="$(printf '%s' "$out" | sed -n 's/.*"opsPerSec": \([0-9.e+]*\).*/\1/p' | head -1)"
  b_p50="$(printf '%s' "$out" | sed -n 's/.*"p50": \([0-9.e+]*\).*/\1/p' | head -1)"
  b_p99="$(printf '%s' "$out" | sed -n 's/.*"p99": \([0-9.e+]*\).*/\1/p' | head -1)"
  b_bad="$(printf '%s' "$out" | awk -F': ' '/"failed"|"duplicates"/ { gsub(/[ ,]/, "", $2); s += $2 } END { print s + 0 }')"
  b_n="$(printf '%s' "$out" | sed -n 's/.*"succeeded": \([0-9]*\).*/\1/p' | head -1)"
}

# run_wrk C STAGE: one wrk run; sets w_ops w_p50 w_p99 w_bad. wrk's own
# timeout (2 s) drops slower answers from its count; the bench waits 30 s.
run_wrk() {
  local out threads
  threads=$(( $1 < 2 ? 1 : 2 ))
  out="$(RUN="$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" WAIT="$2" wrk -t "$threads" -c "$1" -d "${secs}s" --timeout 30s --latency -s scripts/wrk-add-item.lua "$url")"
  w_ops="$(printf '%s\n' "$out" | awk '/Requests\/sec/ { print $2 }')"
  w_p50="$(wrk_ms "$(printf '%s\n' "$out" | awk '$1 == "50%" { print $2 }')")"
  w_p99="$(wrk_ms "$(printf '%s\n' "$out" | awk '$1 == "99%" { print $2 }')")"
  w_bad="$(printf '%s\n' "$out" | awk '/Non-2xx/ { n += $5 } /Socket errors/ { n += 1 } END { print n + 0 }')"
  w_n="$(printf '%s\n' "$out" | awk '/requests in/ { print $1 }')"
}

# profile_during STORE: a 5-second CPU profile of serve, starting 1 s into
# the bench run it is started beside.
profile_during() {
  [ -n "$pprof_dir" ] || return 0
  mkdir -p "$pprof_dir"
  (sleep 1; curl -fs -o "$pprof_dir/$1.cpu.pprof" "http://$pprof_addr/debug/pprof/profile?seconds=5") &
}

# commits: the scratch database's committed transactions so far, "" on
# SQLite. The statistics reach pg_stat_database within a second.
commits() {
  [ -n "$scratch" ] && [ "$1" != sqlite ] || return 0
  psql -qAt "$FACTUM_POSTGRES_URL" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = '$scratch'"
}

# settle: catch_up, keeping the longest catch-up of the point in drain.
settle() {
  local d
  d="$(catch_up)"
  drain="$(awk -v a="$drain" -v b="$d" 'BEGIN { print (b > a) ? b : a }')"
}

# points STORE: every stage and concurrency against the running serve.
points() {
  local store="$1" st c r lagfile sampler
  "$tmp/factum" bench --url "$url" --concurrency 16 --total 2000 --wait SNAPSHOT --quiet --allow-failures >/dev/null
  catch_up >/dev/null
  for st in $stages; do
    for c in $concurrencies; do
      : >"$tmp/b_ops"; : >"$tmp/b_p50"; : >"$tmp/b_p99"; : >"$tmp/w_ops"; : >"$tmp/w_p50"; : >"$tmp/w_p99"; : >"$tmp/ratio"
      bad=0; lagfile="$tmp/lag"; : >"$lagfile"; drain=0; sent=0
      sleep 1; c0="$(commits "$store")"
      for r in $(seq 1 "$rounds"); do
        sample_lag "$lagfile" &
        sampler=$!
        if [ "$st" = PROCESSED ] && [ "$c" = 64 ] && [ "$r" = 1 ]; then profile_during "$store"; fi
        # Alternate which goes first, so neither always follows the other,
        # and let the consumers catch up after each: the second run would
        # otherwise share the machine with the backlog the first left.
        if [ $((r % 2)) -eq 1 ]; then run_bench "$c" "$st"; settle; run_wrk "$c" "$st"; else run_wrk "$c" "$st"; settle; run_bench "$c" "$st"; fi
        settle
        kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
        echo "$b_ops" >>"$tmp/b_ops"; echo "$b_p50" >>"$tmp/b_p50"; echo "$b_p99" >>"$tmp/b_p99"
        echo "$w_ops" >>"$tmp/w_ops"; echo "$w_p50" >>"$tmp/w_p50"; echo "$w_p99" >>"$tmp/w_p99"
        awk -v a="$b_ops" -v b="$w_ops" 'BEGIN { if (b > 0) print a / b }' >>"$tmp/ratio"
        bad=$(( bad + b_bad + w_bad )); sent=$(( sent + b_n + w_n ))
      done
      c1="$(commits "$store")"
      per="-"
      [ -n "$c0" ] && per="$(awk -v a="$c0" -v b="$c1" -v n="$sent" 'BEGIN { printf "%.2f", (b - a) / (n > 0 ? n : 1) }')"
      lagmax="$(sort -g "$lagfile" | tail -1)"
      printf '%-10s %-9s %3s | %7.0f %7.2f %8.2f | %7.0f %7.2f %8.2f | %5.2f | %5.1f %5s | %7s | %s\n' "$store" "$st" "$c" \
        "$(median <"$tmp/b_ops")" "$(median <"$tmp/b_p50")" "$(median <"$tmp/b_p99")" \
        "$(median <"$tmp/w_ops")" "$(median <"$tmp/w_p50")" "$(median <"$tmp/w_p99")" \
        "$(median <"$tmp/ratio")" "${lagmax:-0}" "$drain" "$per" "$bad"
    done
  done
}

# pg_url DB: FACTUM_POSTGRES_URL with its database replaced by DB.
pg_url() { printf '%s' "$FACTUM_POSTGRES_URL" | sed -E "s#^(postgres(ql)?://[^/]*/)[^?]*#\1$1#"; }

# seed_pg URL N: N streams (four per aggregate) and a snapshot per
# aggregate appended with SQL, and every consumer's checkpoint moved to the
# log's end, so that serve restarts on a large log with nothing to catch up.
seed_pg() {
  local u="$1" n="$2" streams snaps cps
  streams="$(psql -qAt "$u" -c "SELECT tablename FROM pg_tables WHERE tablename LIKE 'factum\\_%\\_streams' LIMIT 1")"
  snaps="${streams%_streams}_snapshots"
  cps="${streams%_streams}_checkpoints"
  psql -q "$u" -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO $streams (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
  SELECT 'cart', 'seed-' || (i / 4), 'default', (i % 4) + 1, 'seed-s' || i, 'seed-c' || i, 'seed-r' || i, '', NULL, now(), '[]'
  FROM generate_series(0, $n - 1) AS i;
INSERT INTO $snaps (aggregate, aggregate_id, tenant_id, owner_id, version, event_id, first_operator, operator,
    first_event_time, event_time, snapshot_time, deleted, state)
  SELECT 'cart', 'seed-' || i, 'default', '', 4, 'seed-e' || i, '', '', 0, 0, 0, false, '{}'
  FROM generate_series(0, $n / 4 - 1) AS i
  ON CONFLICT DO NOTHING;
UPDATE $cps SET (tx, seq) = (SELECT tx::text::bigint, seq FROM $streams ORDER BY tx DESC, seq DESC LIMIT 1);
ANALYZE;
SQL
}

printf 'factum serve: %s s per run, %s round(s) per point; load average %s\n' "$secs" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-9s %3s | %-24s | %-24s | %-5s | %-11s | %-7s | %s\n' "" "" "" "factum bench" "wrk" "bench" "snapshot lag" "commits" "failed+"
printf '%-10s %-9s %3s | %7s %7s %8s | %7s %7s %8s | %5s | %5s %5s | %7s | %s\n' store stage c "cmd/s" "p50 ms" "p99 ms" "req/s" "p50 ms" "p99 ms" "/ wrk" "max s" "drain" "/ cmd" "dup"
for store in $stores; do
  case "$store" in
  sqlite)
    start_serve --data-dir "$tmp/sqlite"
    points sqlite
    stop_serve
    ;;
  pg | pg-seeded)
    if [ -z "$scratch" ]; then
      scratch="factum_bench_$$_$RANDOM"
      psql -q "$FACTUM_POSTGRES_URL" -c "CREATE DATABASE $scratch" >/dev/null
    fi
    if [ "$store" = pg-seeded ]; then
      # The schema exists once serve has started on the database.
      start_serve --postgres-url "$(pg_url "$scratch")"
      "$tmp/factum" bench --url "$url" --concurrency 4 --total 200 --wait SNAPSHOT --quiet --allow-failures >/dev/null
      catch_up >/dev/null
      stop_serve
      t0="$(date +%s)"
      seed_pg "$(pg_url "$scratch")" "$seed"
      printf '(seeded %s streams in %s s)\n' "$seed" "$(( $(date +%s) - t0 ))"
    fi
    start_serve --postgres-url "$(pg_url "$scratch")"
    points "$store"
    stop_serve
    ;;
  *) echo "unknown store $store" >&2; exit 1 ;;
  esac
done
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

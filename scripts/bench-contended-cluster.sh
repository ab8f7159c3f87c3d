#!/usr/bin/env bash
# Contention through a cluster, end to end: N commands on one cart from
# CONCURRENCY clients, each waiting for PROCESSED, through one `factum
# serve` instance (a cluster of one on PostgreSQL and NATS) and through two
# instances of another cluster (half of the commands to each, so that half
# cross to the cart's owner), in rounds that alternate which goes first.
# Prints each round's commands/s and p50/p99 of both, two ÷ one, and the
# median ratio. Every instance is a process of its own, as in production;
# the clients (`factum bench --carts 1`), PostgreSQL and NATS share the
# machine with them.
#   scripts/bench-contended-cluster.sh [ROUNDS]
# Environment: FACTUM_POSTGRES_URL and FACTUM_NATS_URL (required; with
# NATS_SERVER=current a NATS server of go.mod's version runs instead of the
# one FACTUM_NATS_URL names: see scripts/bench-lib.sh), N
# [1600, at most 1980: one cart's capacity], CONCURRENCY [400], BIN (a
# factum binary; built from the worktree when unset), SERVE_BIN (the
# binary the instances run, to compare builds; BIN when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
rounds="${1:-6}"; n="${N:-1600}"; c="${CONCURRENCY:-400}"
pg="${FACTUM_POSTGRES_URL:?set FACTUM_POSTGRES_URL}"
[[ "${NATS_SERVER:-}" == current ]] || : "${FACTUM_NATS_URL:?set FACTUM_NATS_URL, or NATS_SERVER=current}"
for tool in psql curl python3; do
  command -v "$tool" >/dev/null || { echo "bench-contended-cluster: $tool is needed" >&2; exit 1; }
done
work="$(mktemp -d)"
pids=(); dbs=(); namespaces=()

# js_delete NAME... deletes these JetStream streams of the NATS server at
# FACTUM_NATS_URL (no nats CLI needed: one request each over the client
# protocol); a stream that is not there is no error.
js_delete() {
  python3 - "$nats" "$@" <<'PY'
import json, socket, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
s = socket.create_connection((u.hostname or "127.0.0.1", u.port or 4222), timeout=5)
f = s.makefile("rb")
f.readline()
conn = {"verbose": False}
if u.username:
    conn.update({"user": urllib.parse.unquote(u.username), "pass": urllib.parse.unquote(u.password or "")})
s.sendall(b"CONNECT " + json.dumps(conn).encode() + b"\r\nSUB _INBOX.jsdel 1\r\n")
for name in sys.argv[2:]:
    s.sendall(("PUB $JS.API.STREAM.DELETE.%s _INBOX.jsdel 0\r\n\r\n" % name).encode())
    while True:
        line = f.readline()
        if not line or line.startswith(b"-ERR"):
            sys.exit("js_delete %s: %r" % (name, line))
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        if line.startswith(b"MSG"):
            f.read(int(line.split()[-1]) + 2)
            break
PY
}

cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for d in "${dbs[@]}"; do psql -q "$pg" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true; done
  for ns in "${namespaces[@]}"; do js_delete "${ns^^}_COMMANDS" "KV_${ns}_leases" || true; done
  stop_current_nats
  rm -rf "$work"
}
trap cleanup EXIT
start_current_nats
nats="$FACTUM_NATS_URL"
bin="${BIN:-}"
if [[ -z "$bin" ]]; then
  go build -o "$work/factum" ./cmd/factum
  bin="$work/factum"
fi
serve_bin="${SERVE_BIN:-$bin}"

# db_url DB prints FACTUM_POSTGRES_URL with its database replaced by DB,
# whether the URL names a database or not, and keeps its query.
db_url() { printf '%s' "$pg" | sed -E "s#^(postgres(ql)?://[^/?]*)(/[^?]*)?#\1/$1#"; }

# cluster NAME PORT... starts one instance per port of a cluster of its
# own (a scratch database and NATS namespace, both removed on exit).
cluster() {
  local name="$1" db="factum_hot_$$_$1" i=0 port
  shift
  if [[ ! "$pg" =~ ^postgres(ql)?:// ]]; then
    echo "bench-contended-cluster: FACTUM_POSTGRES_URL must be a postgres:// URL (the clusters get scratch databases)" >&2
    exit 1
  fi
  # Registered before they exist, so that an interrupt in between leaves
  # nothing behind: dropping or deleting what is not there is no error.
  dbs+=("$db"); namespaces+=("hot$$$name")
  psql -q "$pg" -c "CREATE DATABASE $db" >/dev/null
  for port in "$@"; do
    env -u FACTUM_POSTGRES_URL -u FACTUM_NATS_URL -u FACTUM_REDIS_URL "$serve_bin" serve \
      --postgres-url "$(db_url "$db")" \
      --nats-url "$nats" --nats-namespace "hot$$$name" --instance "i$i" \
      --addr "127.0.0.1:$port" --access-log=false >"$work/$name-$i.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
}

# owned PORT prints how many partitions the instance at PORT owns.
owned() {
  curl -s "http://127.0.0.1:$1/readyz" | python3 -c 'import json,sys
try: print(len(json.load(sys.stdin).get("partitions", [])))
except Exception: print(0)'
}

one_port=18201; two_ports=(18202 18203)
cluster one "$one_port"
cluster two "${two_ports[@]}"
# ready says whether every instance owns its share of the 16 partitions.
ready() { [[ "$(owned "$one_port")" == 16 && "$(owned "${two_ports[0]}")" == 8 && "$(owned "${two_ports[1]}")" == 8 ]]; }
for i in $(seq 1 300); do
  ready && break
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || { echo "bench-contended-cluster: an instance exited; its log:" >&2; tail -n 20 "$work"/*.log >&2; exit 1; }
  done
  sleep 0.2
done
if ! ready; then
  echo "bench-contended-cluster: the instances did not take their partitions within 60s; their logs:" >&2
  tail -n 20 "$work"/*.log >&2
  exit 1
fi
echo "partitions: one $(owned "$one_port"); two $(owned "${two_ports[0]}") + $(owned "${two_ports[1]}")"

# run URLS prints "commands/s p50 p99 failed" of one contended run.
run() {
  "$bin" bench --url "$1" --carts 1 --concurrency "$c" --total "$n" --json --quiet --allow-failures 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin); l=r.get("latencyMs") or {}; print("%.0f %.1f %.1f %d" % (r["opsPerSec"], l.get("p50", 0), l.get("p99", 0), r["failed"]))'
}
one_url="http://127.0.0.1:$one_port"
two_url="http://127.0.0.1:${two_ports[0]},http://127.0.0.1:${two_ports[1]}"
run "$one_url" >/dev/null; run "$two_url" >/dev/null # warm-up
ratios=()
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then o="$(run "$one_url")"; t="$(run "$two_url")"; else t="$(run "$two_url")"; o="$(run "$one_url")"; fi
  read -r ocs op50 op99 ofail <<<"$o"
  read -r tcs tp50 tp99 tfail <<<"$t"
  q="$(ratio "$tcs" "$ocs")"
  ratios+=("$q")
  echo "round $r: one $ocs commands/s (p50 $op50 ms, p99 $op99 ms, $ofail failed), two $tcs (p50 $tp50, p99 $tp99, $tfail failed), two ÷ one $q"
done
echo "median two ÷ one: $(printf '%s\n' "${ratios[@]}" | median) (load $(cut -d' ' -f1-3 /proc/loadavg))"

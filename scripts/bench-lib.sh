# shellcheck shell=bash
# Sourced by the benchmark scripts, not run on its own: building a
# package's benchmarks once per revision, the figures' arithmetic, and a
# NATS server of go.mod's version to run them on.
# The sourcing script runs from the repository's root and sets work (a
# scratch directory).

# build_tests PKG BASE compiles PKG's tests to $work/new.test and, when
# BASE names a revision, that revision's (from `git archive`, so the
# worktree is untouched) to $work/base.test, and sets bins to the
# binaries built, base first: compiled once, the rounds measure only
# running.
build_tests() {
	go test -c -o "$work/new.test" "./$1/"
	bins=(new)
	if [[ -n "$2" ]]; then
		mkdir "$work/base"
		git archive "$2" | tar -x -C "$work/base"
		(cd "$work/base" && go test -c -o "$work/base.test" "./$1/")
		bins=(base new)
	fi
}

# median prints the median of the numbers on its input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B prints A / B to two decimals, or "n/a" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) printf "n/a"; else printf "%.2f", a / b }'; }

# start_current_nats, when NATS_SERVER is "current", starts a NATS server
# of the version go.mod requires (built from the module cache: no
# download beyond the module proxy), with JetStream, on a free port of
# this machine and its store in $work; it exports FACTUM_NATS_URL naming
# it and sets nats_server_pid, which the sourcing script stops on exit.
# Debian's nats-server 2.9.10 spends about twice the CPU of a current one
# on the crossing of the contention benchmarks (docs/performance.md):
# this measures what a current server does, beside what the machine's
# does. Without NATS_SERVER it does nothing.
start_current_nats() {
	nats_server_pid=""
	[[ "${NATS_SERVER:-}" == current ]] || return 0
	go build -o "$work/nats-server" github.com/nats-io/nats-server/v2
	local port
	port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
	"$work/nats-server" -a 127.0.0.1 -p "$port" -js -sd "$work/nats-store" >"$work/nats-server.log" 2>&1 &
	nats_server_pid=$!
	export FACTUM_NATS_URL="nats://127.0.0.1:$port"
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "NATS server: $("$work/nats-server" --version) at $FACTUM_NATS_URL"
			return 0
		fi
		sleep 0.1
	done
	echo "bench: the NATS server did not start; its log:" >&2
	tail -n 20 "$work/nats-server.log" >&2
	return 1
}

# stop_current_nats stops the server start_current_nats started, if any.
stop_current_nats() {
	if [[ -n "${nats_server_pid:-}" ]]; then
		kill -TERM "$nats_server_pid" 2>/dev/null || true
		wait "$nats_server_pid" 2>/dev/null || true
	fi
}

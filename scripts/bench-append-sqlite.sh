#!/usr/bin/env bash
# Append throughput of the SQLite event store against the physical limit
# measured in the same run.
#
# For each number of concurrent writers (CLIENTS) it alternates, for ROUNDS
# rounds: the Go benchmark BenchmarkRawInsert (a single-row INSERT of the
# store's row shape into a table with the same two unique indexes, each
# committed on its own with synchronous=FULL, through the one write
# connection), then BenchmarkAppend at the same concurrency with coalescing
# off ("single": one commit per stream) and on ("coalesced"). Each round
# prints the figures and the ratios; the median ratio over the rounds is
# the result.
#
# With BASE set to a revision, each round also runs BenchmarkAppend of that
# revision (built from `git archive`, so the worktree is untouched) right
# after this one's, and prints its figures and ratios beside them: a
# before/after comparison made in the same minutes.
#
# Usage: scripts/bench-append-sqlite.sh
# Environment: CLIENTS ("1 8 32"), ROUNDS (3), BENCHTIME (3s), BASE (unset).
set -euo pipefail
cd "$(dirname "$0")/.."

clients=${CLIENTS:-1 8 32}
rounds=${ROUNDS:-3}
benchtime=${BENCHTIME:-3s}
base=${BASE:-}

# Compile once, so that rounds measure only running.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin="$work/sqlite.test"
go test -c -o "$bin" ./sqlite/
if [[ -n "$base" ]]; then
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	(cd "$work/base" && go test -c -o "$work/base.test" ./sqlite/)
fi

# streams_per_s OUTPUT PREFIX prints the streams/s of the benchmark whose
# name starts with PREFIX.
streams_per_s() {
	awk -v p="$2" 'index($1, p) == 1 { for (i = 2; i < NF; i++) if ($(i+1) == "streams/s") print int($i) }' <<<"$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
gobench() { (cd sqlite && "$bin" -test.run '^$' -test.bench "$1" -test.benchtime "$benchtime"); }
basebench() { (cd "$work/base/sqlite" && "$work/base.test" -test.run '^$' -test.bench "$1" -test.benchtime "$benchtime"); }

echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), modernc.org/sqlite, WAL, synchronous=FULL"
fmt='%-8s %-6s %13s %17s %7s %14s %7s'
header=(writers round raw_insert/s single_streams/s ratio coalesced/s ratio)
if [[ -n "$base" ]]; then
	fmt+=' %14s %7s %14s %7s'
	header+=(base_single/s ratio base_coal/s ratio)
fi
# shellcheck disable=SC2059
printf "$fmt\n" "${header[@]}"
summary=()
for c in $clients; do
	single_ratios=() coalesced_ratios=() base_single_ratios=() base_coalesced_ratios=()
	for r in $(seq "$rounds"); do
		out=$(gobench "^BenchmarkRawInsert\$/^writers=$c\$")
		out+=$'\n'$(gobench "^BenchmarkAppend\$/^(single|coalesced)\$/^writers=$c\$")
		raw=$(streams_per_s "$out" "BenchmarkRawInsert/writers=$c-")
		single=$(streams_per_s "$out" "BenchmarkAppend/single/writers=$c-")
		coalesced=$(streams_per_s "$out" "BenchmarkAppend/coalesced/writers=$c-")
		if [[ -z "$raw" || -z "$single" || -z "$coalesced" ]]; then
			echo "bench-append-sqlite: round $r at $c writers failed:" >&2
			echo "$out" >&2
			exit 1
		fi
		single_ratios+=("$(ratio "$single" "$raw")")
		coalesced_ratios+=("$(ratio "$coalesced" "$raw")")
		row=("$c" "$r" "$raw" "$single" "${single_ratios[-1]}" "$coalesced" "${coalesced_ratios[-1]}")
		if [[ -n "$base" ]]; then
			bout=$(basebench "^BenchmarkAppend\$/^(single|coalesced)\$/^writers=$c\$")
			bsingle=$(streams_per_s "$bout" "BenchmarkAppend/single/writers=$c-")
			bcoalesced=$(streams_per_s "$bout" "BenchmarkAppend/coalesced/writers=$c-")
			if [[ -z "$bsingle" || -z "$bcoalesced" ]]; then
				echo "bench-append-sqlite: round $r at $c writers failed on $base:" >&2
				echo "$bout" >&2
				exit 1
			fi
			base_single_ratios+=("$(ratio "$bsingle" "$raw")")
			base_coalesced_ratios+=("$(ratio "$bcoalesced" "$raw")")
			row+=("$bsingle" "${base_single_ratios[-1]}" "$bcoalesced" "${base_coalesced_ratios[-1]}")
		fi
		# shellcheck disable=SC2059
		printf "$fmt\n" "${row[@]}"
	done
	line=$(printf '%-8s %24s %26s' "$c" "$(printf '%s\n' "${single_ratios[@]}" | median)" "$(printf '%s\n' "${coalesced_ratios[@]}" | median)")
	if [[ -n "$base" ]]; then
		line+=$(printf ' %24s %26s' "$(printf '%s\n' "${base_single_ratios[@]}" | median)" "$(printf '%s\n' "${base_coalesced_ratios[@]}" | median)")
	fi
	summary+=("$line")
done
echo
line=$(printf '%-8s %24s %26s' writers "median single/raw" "median coalesced/raw")
[[ -n "$base" ]] && line+=$(printf ' %24s %26s' "base single/raw" "base coalesced/raw")
echo "$line"
printf '%s\n' "${summary[@]}"

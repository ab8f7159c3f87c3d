# shellcheck shell=bash
# Sourced by bench-append-pg.sh and bench-append-sqlite.sh, not run on its
# own: what both do to compare BenchmarkAppend's single and coalesced
# streams/s with a physical limit measured in the same round, and, with
# BASE, BenchmarkAppend of that revision beside them.
#
# The sourcing script sets name (its name, for errors), work (a scratch
# directory), benchtime and base (BASE, or empty); it calls
# build_benchmarks once; for each writer count start_writers, then per
# round add_figures (and add_figures base_ with BASE) to fill row, then
# add_summary; print_summary last.

# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

# build_benchmarks PKG compiles PKG's tests to $bin and, with base set, the
# base revision's to $work/base.test (build_tests).
build_benchmarks() {
	build_tests "$1" "$base"
	bin="$work/new.test"
}

# metric OUTPUT PREFIX UNIT prints the UNIT figure of the benchmark whose
# name starts with PREFIX.
metric() {
	awk -v p="$2" -v u="$3" 'index($1, p) == 1 { for (i = 2; i < NF; i++) if ($(i+1) == u) print int($i) }' <<<"$1"
}

# run_append BIN DIR C runs BIN's single and coalesced BenchmarkAppend at C
# writers in DIR.
run_append() { (cd "$2" && "$1" -test.run '^$' -test.bench "^BenchmarkAppend\$/^(single|coalesced)\$/^writers=$3\$" -test.benchtime "$benchtime"); }

# start_writers empties the ratios of one writer count.
start_writers() {
	single_ratios=() coalesced_ratios=() base_single_ratios=() base_coalesced_ratios=()
}

# add_figures KIND OUTPUT LIMIT C R reads the single and coalesced
# streams/s of BenchmarkAppend from OUTPUT, fails unless LIMIT and both
# are there (round R at C writers), records their ratios to LIMIT in
# KIND's ratios (KIND is empty for this revision, base_ for BASE's) and
# adds the figures and the ratios to row.
add_figures() {
	local -n singles="${1}single_ratios" coalesceds="${1}coalesced_ratios"
	local single coalesced
	single=$(metric "$2" BenchmarkAppend/single/ streams/s)
	coalesced=$(metric "$2" BenchmarkAppend/coalesced/ streams/s)
	if [[ -z "$3" || -z "$single" || -z "$coalesced" ]]; then
		echo "$name: round $5 at $4 writers failed${1:+ on $base}:" >&2
		echo "$2" >&2
		exit 1
	fi
	singles+=("$(ratio "$single" "$3")")
	coalesceds+=("$(ratio "$coalesced" "$3")")
	row+=("$single" "${singles[-1]}" "$coalesced" "${coalesceds[-1]}")
}

# add_summary C adds the median ratios of C writers to summary.
add_summary() {
	local line
	line=$(printf '%-8s %24s %26s' "$1" "$(printf '%s\n' "${single_ratios[@]}" | median)" "$(printf '%s\n' "${coalesced_ratios[@]}" | median)")
	if [[ -n "$base" ]]; then
		line+=$(printf ' %24s %26s' "$(printf '%s\n' "${base_single_ratios[@]}" | median)" "$(printf '%s\n' "${base_coalesced_ratios[@]}" | median)")
	fi
	summary+=("$line")
}

# print_summary LIMIT prints the median ratios of every writer count, LIMIT
# naming the limit in the column heads.
print_summary() {
	local line
	echo
	line=$(printf '%-8s %24s %26s' writers "median single/$1" "median coalesced/$1")
	if [[ -n "$base" ]]; then
		line+=$(printf ' %24s %26s' "base single/$1" "base coalesced/$1")
	fi
	echo "$line"
	printf '%s\n' "${summary[@]}"
}

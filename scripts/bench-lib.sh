# shellcheck shell=bash
# Sourced by the benchmark scripts, not run on its own: building a
# package's benchmarks once per revision, and the figures' arithmetic.
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

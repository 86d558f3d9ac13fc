#!/usr/bin/env bash
# Runs the benchmarks of every package that has some, with allocations.
# BENCH narrows them (a -bench regexp, default .); BENCHTIME sets -benchtime.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
mapfile -t pkgs < <(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Benchmark' . |
	xargs -r -n1 dirname | sort -u)
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "no benchmarks"
	exit 0
fi
args=(-run '^$' -bench "${BENCH:-.}" -benchmem)
if [ -n "${BENCHTIME:-}" ]; then
	args+=(-benchtime "$BENCHTIME")
fi
"$GO" test "${args[@]}" "${pkgs[@]}"

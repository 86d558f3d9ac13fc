#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 10s). go test -fuzz takes one target of one
# package at a time, so this finds them and runs them in turn; any failure stops it, and the
# failing input is kept in that package's testdata/fuzz for a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
found=0
while IFS= read -r file; do
	dir=$(dirname "$file")
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		found=1
		echo "== $dir $name ($FUZZTIME)"
		out=$(mktemp)
		if ! "$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$dir" 2>&1 | tee "$out"; then
			# Go's fuzzing engine may end a short run with "context deadline exceeded" and no
			# failing input when a worker is slow to stop on a loaded machine. That is no find:
			# run the target once more. A real find writes its input and says so.
			if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
				echo "== $dir $name: the fuzzing engine timed out stopping, with no failing input; once more"
				"$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$dir"
			else
				rm -f "$out"
				exit 1
			fi
		fi
		rm -f "$out"
	done
done < <(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Fuzz' . | sort)
if [ "$found" -eq 0 ]; then
	echo "no fuzz targets"
fi

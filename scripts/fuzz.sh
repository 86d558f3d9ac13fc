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
		"$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$dir"
	done
done < <(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Fuzz' . | sort)
if [ "$found" -eq 0 ]; then
	echo "no fuzz targets"
fi

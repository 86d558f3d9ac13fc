#!/usr/bin/env bash
# Measures what each feature of internal/buildfeatures costs the stripped linux/armv6 binary (the
# Pi Zero's, the one with a budget): a build with everything, one build per omit tag alone, and
# one with the board's tags (BOARD_TAGS, as make cross uses), and the board's build with each
# feature put back, linked as make cross links it (segments rounded to 4 KiB pages). Prints, per
# build, the file size and the bytes loaded from it (the sections but .bss), and in loaded bytes what omitting the
# tag alone saves and what the feature costs the board build: the figures of
# internal/buildfeatures/doc.go. Features can share code (serve and sim both hold the stand-in
# server), so the savings alone add up to less than all of them together.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BOARD_TAGS=${BOARD_TAGS:?set BOARD_TAGS (the Makefile does)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# measure TAGS: prints "FILE_BYTES LOADED_BYTES" of the stripped armv6 build with TAGS.
measure() {
	env CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6 "$GO" build -trimpath -tags "$1" -ldflags "-s -w -R 4096" \
		-o "$out/devicectl" ./cmd/devicectl
	local loaded
	loaded=$(size -A "$out/devicectl" | awk '$1 ~ /^\./ && $1 != ".bss" && $1 != ".noptrbss" {s += $2} END {print s}')
	echo "$(stat -c %s "$out/devicectl") $loaded"
}

row() { printf '%-40s %10s %10s %10s\n' "$@"; }
read -r full_file full_loaded < <(measure "")
read -r board_file board_loaded < <(measure "$BOARD_TAGS")
row "build" "file" "loaded" "saves"
row "everything" "$full_file" "$full_loaded" "-"
row "BOARD_TAGS (make cross)" "$board_file" "$board_loaded" $((full_loaded - board_loaded))
for tag in ${BOARD_TAGS//,/ }; do
	read -r file loaded < <(measure "$tag")
	row "only $tag" "$file" "$loaded" $((full_loaded - loaded))
done
row "build" "file" "loaded" "costs"
for tag in ${BOARD_TAGS//,/ }; do
	rest=$(tr , '\n' <<<"$BOARD_TAGS" | grep -vx "$tag" | paste -sd,)
	read -r file loaded < <(measure "$rest")
	row "BOARD_TAGS but $tag" "$file" "$loaded" $((loaded - board_loaded))
done

#!/usr/bin/env bash
# Cross-builds devicectl for the boards it runs on: static (CGO_ENABLED=0), stripped (-s -w),
# reproducible (-trimpath) linux binaries in dist/, with their SHA256SUMS.
# VERSION and COMMIT are stamped into the binaries (the Makefile passes them).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:-dev}
COMMIT=${COMMIT:-unknown}
TAGS=${TAGS:-} # openapi: OpenAPI tool sets, +1.8 MB (past the armv6 budget)
DIST=${DIST:-dist}
ldflags="-s -w -X main.version=$VERSION -X main.commit=$COMMIT"

mkdir -p "$DIST"
rm -f "$DIST"/devicectl-linux-* "$DIST"/SHA256SUMS

# build NAME ENV...: one target; NAME is the suffix of the binary's name.
build() {
	local name=$1
	shift
	env CGO_ENABLED=0 GOOS=linux "$@" "$GO" build -trimpath -tags "$TAGS" -ldflags "$ldflags" \
		-o "$DIST/devicectl-linux-$name" ./cmd/devicectl
}

build armv6 GOARCH=arm GOARM=6 # Raspberry Pi Zero / 1
build armv7 GOARCH=arm GOARM=7 # Raspberry Pi 2, most 32-bit boards
build arm64 GOARCH=arm64       # Raspberry Pi 3/4/5 with a 64-bit OS, Jetson, RK3588
build amd64 GOARCH=amd64
build riscv64 GOARCH=riscv64   # VisionFive 2, Milk-V, Lichee Pi 4A

(cd "$DIST" && sha256sum devicectl-linux-* >SHA256SUMS)
ls -l "$DIST"

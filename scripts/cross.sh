#!/usr/bin/env bash
# Cross-builds devicectl for the boards it runs on: static (CGO_ENABLED=0), stripped (-s -w),
# reproducible (-trimpath) linux binaries in dist/, with their SHA256SUMS.
# VERSION and COMMIT are stamped into the binaries (the Makefile passes them). The boards'
# binaries leave out the features BOARD_TAGS names (see internal/buildfeatures); amd64, for
# laptops and servers as much as boards, keeps everything.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:-dev}
COMMIT=${COMMIT:-unknown}
TAGS=${TAGS:-} # openapi: OpenAPI tool sets, +1.8 MB (past the armv6 budget)
BOARD_TAGS=${BOARD_TAGS-devicectl_omit_serve,devicectl_omit_sim,devicectl_omit_swarm,nethttpomithttp2}
board_tags=$TAGS${TAGS:+${BOARD_TAGS:+,}}$BOARD_TAGS
DIST=${DIST:-dist}
ldflags="-s -w -X main.version=$VERSION -X main.commit=$COMMIT"
# 32-bit ARM Linux maps memory in 4 KiB pages only; Go's linker pads each segment of an arm
# binary to 64 KiB all the same. Rounding to the page size the boards have saves that padding
# (up to 180 KiB of the armv6 binary's 9 MiB budget) and changes nothing once it is loaded.
arm32_ldflags="$ldflags -R 4096"

mkdir -p "$DIST"
rm -f "$DIST"/devicectl-linux-* "$DIST"/SHA256SUMS

# build NAME TAGS ENV...: one target; NAME is the suffix of the binary's name.
build() {
	local name=$1 tags=$2 flags=$ldflags
	shift 2
	case $name in armv*) flags=$arm32_ldflags ;; esac
	env CGO_ENABLED=0 GOOS=linux "$@" "$GO" build -trimpath -tags "$tags" -ldflags "$flags" \
		-o "$DIST/devicectl-linux-$name" ./cmd/devicectl
}

build armv6 "$board_tags" GOARCH=arm GOARM=6 # Raspberry Pi Zero / 1
build armv7 "$board_tags" GOARCH=arm GOARM=7 # Raspberry Pi 2, most 32-bit boards
build arm64 "$board_tags" GOARCH=arm64       # Raspberry Pi 3/4/5 with a 64-bit OS, Jetson, RK3588
build riscv64 "$board_tags" GOARCH=riscv64   # VisionFive 2, Milk-V, Lichee Pi 4A
build amd64 "$TAGS" GOARCH=amd64             # laptops and servers too: every feature

(cd "$DIST" && sha256sum devicectl-linux-* >SHA256SUMS)
ls -l "$DIST"

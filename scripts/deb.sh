#!/usr/bin/env bash
# Builds the Debian packages of devicectl (`make deb`) from the binaries `make cross` left in dist/:
#   dist/devicectl_VERSION_armhf.deb   from dist/devicectl-linux-armv6 (see below)
#   dist/devicectl_VERSION_arm64.deb   from dist/devicectl-linux-arm64
#   dist/devicectl_VERSION_amd64.deb   from dist/devicectl-linux-amd64
#   dist/devicectl_VERSION_riscv64.deb from dist/devicectl-linux-riscv64
# with nfpm, pinned in go.mod as a Go tool (`go tool nfpm`, nothing to install), configured by
# packaging/nfpm.yaml. Run `make cross deb` so the binaries and the package carry the same VERSION.
# nfpm is v2.45.2: v2.46.0 and later need go.digitalxero.dev modules that the Go module proxy here
# refuses (403). Tools are not linked into devicectl; `go version -m` on a binary shows no nfpm.
#
#   ARCHES="amd64"    build only these (default: armhf arm64 amd64 riscv64)
#   VERSION=v1.2.3    the version to package (default: git describe, as the Makefile's VERSION)
#   DEB_MAINTAINER    the Maintainer field, "Name <email>"
#   scripts/deb.sh --version-of V   prints the Debian version made from V, builds nothing
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
ARCHES=${ARCHES:-armhf arm64 amd64 riscv64}
export DEB_MAINTAINER=${DEB_MAINTAINER:-devicectl maintainers <maintainers@devicectl.invalid>}

die() {
	echo "deb.sh: $*" >&2
	exit 1
}

# debian_version V: a valid Debian upstream version (no epoch, no revision) made from V, the output
# of `git describe --tags --always --dirty`, that sorts as the builds it names:
#   v1.2.3 -> 1.2.3           v1.2.3-4-gabc1234 -> 1.2.3+git4.gabc1234 (4 commits after v1.2.3)
#   v2.0.0-rc1 -> 2.0.0~rc1 (before 2.0.0)    -dirty -> +dirty (or .dirty after a +)
#   abc1234 (a commit, no tag yet) -> 0.0.0~git57.gabc1234, 57 its commit count: before any release
#   anything else (dev) -> 0.0.0~dev
debian_version() {
	local v=${1#v} dirty="" out count
	if [[ $v == *-dirty ]]; then
		v=${v%-dirty}
		dirty=1
	fi
	if [[ $v =~ ^([0-9].*)-([0-9]+)-g([0-9a-f]+)$ ]]; then
		out="$(tag_version "${BASH_REMATCH[1]}")+git${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}"
	elif [[ $v =~ ^[0-9a-f]{7,40}$ ]] && git rev-parse -q --verify "$v^{commit}" >/dev/null 2>&1 &&
		! git rev-parse -q --verify "refs/tags/$v" >/dev/null 2>&1; then
		count=$(git rev-list --count "$v" 2>/dev/null || echo 0)
		out="0.0.0~git$count.g$v"
	elif [[ $v =~ ^[0-9] ]]; then
		out=$(tag_version "$v")
	else
		out="0.0.0~$(tag_version "$v")"
	fi
	if [ -n "$dirty" ]; then
		if [[ $out == *+* ]]; then out+=".dirty"; else out+="+dirty"; fi
	fi
	if ! [[ $out =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
		die "cannot make a Debian version of '$1' (got '$out')"
	fi
	echo "$out"
}

# tag_version T: a semver pre-release dash becomes ~ (sorts before the release); characters a
# Debian version cannot hold become dots.
tag_version() {
	local t=${1//-/\~}
	echo "${t//[^A-Za-z0-9.+~]/.}"
}

if [ "${1:-}" = --version-of ]; then
	[ $# = 2 ] || die "usage: deb.sh --version-of VERSION"
	debian_version "$2"
	exit 0
fi
[ $# = 0 ] || die "usage: deb.sh (no arguments; see the comment at the top)"

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
DEB_VERSION=$(debian_version "$VERSION")
# Timestamps inside the packages: the last commit's, so the same tree builds the same bytes.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export DEB_VERSION SOURCE_DATE_EPOCH

for arch in $ARCHES; do
	case $arch in
	# Debian's armhf baseline is ARMv7, but Raspberry Pi OS's armhf is built for ARMv6 (with
	# VFP) so that it runs on the Pi Zero and Pi 1 too. The binary is static, so the armhf
	# package ships the GOARM=6 build: it runs on every Pi and on any ARMv7 board.
	armhf) bin=$DIST/devicectl-linux-armv6 ;;
	arm64) bin=$DIST/devicectl-linux-arm64 ;;
	amd64) bin=$DIST/devicectl-linux-amd64 ;;
	riscv64) bin=$DIST/devicectl-linux-riscv64 ;;
	*) die "unknown architecture '$arch' (armhf, arm64, amd64 or riscv64)" ;;
	esac
	[ -f "$bin" ] || die "$bin is missing: run make cross first"
	rm -f "$DIST"/devicectl_*_"$arch".deb
	DEB_ARCH=$arch DEB_BINARY=$bin "$GO" tool nfpm package --config packaging/nfpm.yaml \
		--packager deb --target "$DIST/" >/dev/null
	deb="$DIST/devicectl_${DEB_VERSION}_$arch.deb"
	[ -f "$deb" ] || die "nfpm did not write $deb"
	echo "$deb ($(stat -c %s "$deb") bytes, from $bin)"
done

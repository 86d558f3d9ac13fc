#!/usr/bin/env bash
# Installs devicectl as a systemd service on a machine without the .deb (Debian and Raspberry Pi
# OS: use `make deb` and dpkg -i instead). Run as root from a checkout, or from a release tarball
# laid out like one (the binary as ./devicectl, configs/, scripts/install.sh).
#
#   scripts/install.sh [--prefix DIR] [--destdir DIR] [--binary FILE]
#
#   --prefix DIR   where the binary goes: DIR/bin/devicectl (default /usr/local). The unit, the
#                  sysusers.d and tmpfiles.d entries go to DIR/lib/... when DIR is /usr or
#                  /usr/local (systemd looks there), else to /etc/....
#   --destdir DIR  (or DESTDIR=DIR) install into a staging tree: files only, no user, no systemctl
#   --binary FILE  the devicectl binary (default ./devicectl, else dist/devicectl-linux-ARCH for
#                  this machine, from `make cross`)
#
# It installs the binary, the unit (ExecStart pointing at the binary), /etc/devicectl/devicectl.yaml
# (an existing one is kept), and the sysusers.d and tmpfiles.d entries; then creates the devicectl
# user and its device groups (systemd-sysusers, else useradd/groupadd), its state directory, and
# reloads systemd. It does not enable or start the service.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

prefix=/usr/local
destdir=${DESTDIR:-}
binary=""

die() {
	echo "install.sh: $*" >&2
	exit 1
}
usage() {
	# The comment at the top of this file.
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--prefix) prefix=${2:?--prefix needs a directory} && shift ;;
	--prefix=*) prefix=${1#*=} ;;
	--destdir) destdir=${2:?--destdir needs a directory} && shift ;;
	--destdir=*) destdir=${1#*=} ;;
	--binary) binary=${2:?--binary needs a file} && shift ;;
	--binary=*) binary=${1#*=} ;;
	-h | --help) usage 0 ;;
	*) echo "install.sh: unknown argument '$1'" >&2 && usage 2 >&2 ;;
	esac
	shift
done
[[ $prefix == /* ]] || die "--prefix must be an absolute path, not '$prefix'"
prefix=${prefix%/}
[ -n "$prefix" ] || die "--prefix / is not supported: use /usr"
if [ -n "$destdir" ]; then
	mkdir -p "$destdir"
	destdir=$(cd "$destdir" && pwd)
elif [ "$(id -u)" != 0 ]; then
	die "run as root (or with --destdir DIR to stage the files)"
fi

if [ -z "$binary" ]; then
	case $(uname -m) in
	x86_64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	armv7l | armv8l) arch=armv7 ;;
	armv6l) arch=armv6 ;;
	riscv64) arch=riscv64 ;;
	*) arch=unknown ;;
	esac
	for b in "$root/devicectl" "$root/dist/devicectl-linux-$arch"; do
		if [ -f "$b" ]; then
			binary=$b
			break
		fi
	done
	[ -n "$binary" ] || die "no binary: expected $root/devicectl or $root/dist/devicectl-linux-$arch (make cross), or pass --binary FILE"
fi
[ -f "$binary" ] || die "$binary: no such file"

for f in configs/devicectl.yaml configs/systemd/devicectl.service configs/systemd/devicectl.sysusers \
	configs/systemd/devicectl.tmpfiles; do
	[ -f "$root/$f" ] || die "$root/$f is missing: run this from a checkout or a release tarball"
done

case $prefix in
/usr | /usr/local) libdir=$prefix/lib ;;
*) libdir=/etc ;;
esac
if [ "$libdir" = /etc ]; then
	unitdir=/etc/systemd/system
else
	unitdir=$libdir/systemd/system
fi
bindir=$prefix/bin
confdir=/etc/devicectl
sysusers=$libdir/sysusers.d/devicectl.conf
tmpfiles=$libdir/tmpfiles.d/devicectl.conf

echo "installing devicectl into ${destdir:-/}"
install -D -m 0755 "$binary" "$destdir$bindir/devicectl"
echo "  $bindir/devicectl (from $binary)"
install -d -m 0755 "$destdir$unitdir"
sed "s|^ExecStart=/usr/bin/devicectl |ExecStart=$bindir/devicectl |" \
	"$root/configs/systemd/devicectl.service" >"$destdir$unitdir/devicectl.service"
chmod 0644 "$destdir$unitdir/devicectl.service"
grep -q "^ExecStart=$bindir/devicectl " "$destdir$unitdir/devicectl.service" ||
	die "could not point the unit's ExecStart at $bindir/devicectl"
echo "  $unitdir/devicectl.service"
install -D -m 0644 "$root/configs/systemd/devicectl.sysusers" "$destdir$sysusers"
echo "  $sysusers"
install -D -m 0644 "$root/configs/systemd/devicectl.tmpfiles" "$destdir$tmpfiles"
echo "  $tmpfiles"
install -d -m 0755 "$destdir$confdir"
if [ -e "$destdir$confdir/devicectl.yaml" ]; then
	echo "  $confdir/devicectl.yaml exists: kept (the example is $root/configs/devicectl.yaml)"
else
	install -m 0644 "$root/configs/devicectl.yaml" "$destdir$confdir/devicectl.yaml"
	echo "  $confdir/devicectl.yaml"
fi

if [ -n "$destdir" ]; then
	echo "staged into $destdir: no user created, systemd not told"
	exit 0
fi

# The user, its group and the device groups the unit needs (see the sysusers.d file).
if command -v systemd-sysusers >/dev/null; then
	systemd-sysusers "$sysusers"
else
	for g in audio i2c spi gpio; do
		getent group "$g" >/dev/null || groupadd --system "$g"
	done
	if ! getent passwd devicectl >/dev/null; then
		getent group devicectl >/dev/null || groupadd --system devicectl
		useradd --system --gid devicectl --home-dir /var/lib/devicectl --no-create-home \
			--shell "$(command -v nologin || echo /sbin/nologin)" --comment "devicectl device agent" devicectl
	fi
	for g in audio i2c spi gpio; do
		id -nG devicectl | tr ' ' '\n' | grep -qx "$g" || usermod -a -G "$g" devicectl
	done
fi
echo "  user devicectl: $(id devicectl)"
if command -v systemd-tmpfiles >/dev/null; then
	systemd-tmpfiles --create "$tmpfiles"
else
	install -d -m 0700 -o devicectl -g devicectl /var/lib/devicectl
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload
fi

cat <<EOF

devicectl is installed, not enabled or started. Next:
  1. Set server.url (and server.token_file: $confdir/token) in $confdir/devicectl.yaml.
  2. Put the bearer token in $confdir/token, owned by devicectl, mode 0600:
       install -m 0600 -o devicectl -g devicectl /dev/null $confdir/token && sudoedit $confdir/token
  3. Check, then start it at every boot:
       runuser -u devicectl -- $bindir/devicectl doctor --config $confdir/devicectl.yaml
       systemctl enable --now devicectl && journalctl -u devicectl -f
EOF

#!/usr/bin/env bash
# Tests the packaging for real, as root on a Debian machine (CI's): it installs, removes and purges
# the devicectl package on this machine, then puts everything back as it was.
#   1. shellcheck over the packaging scripts; the Debian versions deb.sh makes from git describe
#   2. scripts/install.sh into a DESTDIR: the tree, the modes, ExecStart, a kept config
#   3. make deb (from make cross's binaries, built first if missing); each package's control
#      fields, file list, modes, conffiles, maintainer scripts and binary (architecture)
#   4. dpkg -i the package of this machine's architecture: files and modes, the conffile, the
#      devicectl user and its groups, the state directory, `devicectl version` and `tools` as
#      that user, `systemd-analyze verify` of the unit (which must print nothing), a reinstall
#   5. the postinst's adduser fallback, without systemd-sysusers
#   6. dpkg -r: binary, unit and enablement gone, config, token and state kept; dpkg -P: all gone
#   7. scripts/install.sh for real, with its useradd fallback; its unit verified too
# systemd need not be PID 1 (it is not in CI): the maintainer scripts must cope.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

fail() {
	echo "deb-test: FAIL: $*" >&2
	exit 1
}
step() { echo "== $*"; }
ok() { echo "   ok: $*"; }

[ "$(id -u)" = 0 ] || fail "run as root: it installs and purges the devicectl package on this machine"
command -v dpkg >/dev/null || fail "not a Debian machine (no dpkg)"

# pkg_known: dpkg has devicectl installed, or its config files.
pkg_known() {
	local s
	s=$(dpkg-query -W -f='${Status}' devicectl 2>/dev/null) || return 1
	[ -n "$s" ] && [[ $s != *not-installed ]]
}
# This test removes the package, the user and the groups it creates: refuse to touch a machine
# where devicectl is in use.
if pkg_known; then
	fail "the devicectl package is installed here; remove it first (dpkg -P devicectl)"
fi
if getent passwd devicectl >/dev/null || getent group devicectl >/dev/null; then
	fail "a devicectl user or group exists here; remove it first (userdel devicectl)"
fi
device_groups="audio i2c spi gpio"
new_groups="" # the device groups this test (the package) creates, removed again at the end
for g in $device_groups; do
	getent group "$g" >/dev/null || new_groups+=" $g"
done

tmp=$(mktemp -d)
# Paths the package or install.sh create that may already be here (devicectl run as root leaves
# /var/lib/devicectl, for one): moved aside now, put back at the end.
own_paths=(/etc/devicectl /var/lib/devicectl /usr/local/bin/devicectl
	/usr/local/lib/systemd/system/devicectl.service /usr/local/lib/sysusers.d/devicectl.conf
	/usr/local/lib/tmpfiles.d/devicectl.conf /etc/systemd/system/multi-user.target.wants/devicectl.service
	/run/systemd/systemd-units-load) # the last one: systemd-analyze's marker
# Directories install.sh may create, removed at the end if it did (deepest first).
new_dirs=()
for d in /usr/local/lib/systemd/system /usr/local/lib/systemd /usr/local/lib/sysusers.d /usr/local/lib/tmpfiles.d; do
	[ -d "$d" ] || new_dirs+=("$d")
done
mkdir "$tmp/saved"
for p in "${own_paths[@]}"; do
	if [ -e "$p" ] || [ -L "$p" ]; then
		echo "deb-test: $p exists: moved aside, put back at the end"
		mkdir -p "$tmp/saved$(dirname "$p")"
		mv "$p" "$tmp/saved$p"
	fi
done
cleanup() {
	local rc=$?
	if pkg_known; then
		dpkg -P devicectl >/dev/null 2>&1 || echo "deb-test: cleanup: dpkg -P devicectl failed" >&2
	fi
	if getent passwd devicectl >/dev/null; then userdel devicectl || true; fi
	if getent group devicectl >/dev/null; then groupdel devicectl || true; fi
	for g in $new_groups; do
		if getent group "$g" >/dev/null; then groupdel "$g" || true; fi
	done
	for p in "${own_paths[@]}"; do
		rm -rf "$p"
		if [ -e "$tmp/saved$p" ] || [ -L "$tmp/saved$p" ]; then mv "$tmp/saved$p" "$p"; fi
	done
	for d in "${new_dirs[@]}"; do
		rmdir "$d" 2>/dev/null || true
	done
	rm -rf "$tmp"
	if [ "$rc" = 0 ]; then echo "deb-test: all checks passed"; fi
	exit "$rc"
}
trap cleanup EXIT

# The tools it needs: systemd's (systemd-analyze, systemd-sysusers, systemd-tmpfiles, systemctl,
# all in the systemd package), adduser, shellcheck.
need=""
for c in systemd-analyze:systemd systemd-sysusers:systemd systemd-tmpfiles:systemd systemctl:systemd \
	adduser:adduser useradd:passwd shellcheck:shellcheck; do
	command -v "${c%%:*}" >/dev/null || need+=" ${c#*:}"
done
if [ -n "$need" ]; then
	step "installing$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

# mode_owner PATH WANT: PATH's octal mode and owner:group are WANT, e.g. "755 root:root".
mode_owner() {
	local got
	got=$(stat -c '%a %U:%G' "$1" 2>/dev/null) || fail "$1 is missing"
	[ "$got" = "$2" ] || fail "$1 is $got, want $2"
}
absent() {
	if [ -e "$1" ] || [ -L "$1" ]; then fail "$1 should not exist"; fi
}

step "shellcheck"
shellcheck scripts/deb.sh scripts/install.sh scripts/deb-test.sh
shellcheck -s sh packaging/postinstall.sh packaging/preremove.sh packaging/postremove.sh
ok "scripts/{deb,install,deb-test}.sh, packaging/*.sh"

step "Debian versions from git describe"
head=$(git rev-parse --short=7 HEAD)
count=$(git rev-list --count HEAD)
while read -r describe want; do
	got=$(bash scripts/deb.sh --version-of "$describe")
	[ "$got" = "$want" ] || fail "deb.sh --version-of $describe: got $got, want $want"
	dpkg --validate-version "$got" || fail "$got (from $describe) is not a valid Debian version"
done <<EOF
v1.2.3 1.2.3
v1.2.3-dirty 1.2.3+dirty
v1.2.3-4-gabc1234 1.2.3+git4.gabc1234
v1.2.3-4-gabc1234-dirty 1.2.3+git4.gabc1234.dirty
v2.0.0-rc1 2.0.0~rc1
v2.0.0-rc1-3-gdeadbee 2.0.0~rc1+git3.gdeadbee
$head 0.0.0~git$count.g$head
$head-dirty 0.0.0~git$count.g$head+dirty
dev 0.0.0~dev
EOF
# Each sorts before the next, as the builds they name do.
order=(0.0.0~dev "0.0.0~git$count.g$head" 1.2.3 1.2.3+dirty 1.2.3+git4.gabc1234 2.0.0~rc1
	2.0.0~rc1+git3.gdeadbee 2.0.0)
for ((i = 1; i < ${#order[@]}; i++)); do
	dpkg --compare-versions "${order[i - 1]}" lt "${order[i]}" ||
		fail "${order[i - 1]} does not sort before ${order[i]}"
done
ok "tags, commits after a tag, pre-releases, untagged commits, dirty trees"

for b in armv6 arm64 amd64; do
	if [ ! -f "dist/devicectl-linux-$b" ]; then
		step "dist/devicectl-linux-$b is missing: make cross"
		make cross >/dev/null
		break
	fi
done

step "scripts/install.sh into a DESTDIR"
dest=$tmp/destdir
DESTDIR=$dest bash scripts/install.sh --binary dist/devicectl-linux-amd64 >"$tmp/install.out"
want="/etc/devicectl/devicectl.yaml 644
/usr/local/bin/devicectl 755
/usr/local/lib/systemd/system/devicectl.service 644
/usr/local/lib/sysusers.d/devicectl.conf 644
/usr/local/lib/tmpfiles.d/devicectl.conf 644"
got=$(cd "$dest" && find . -type f -printf '/%P %m\n' | sort)
[ "$got" = "$want" ] || fail "install.sh installed:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
cmp -s "$dest/usr/local/bin/devicectl" dist/devicectl-linux-amd64 || fail "install.sh: the binary differs"
cmp -s "$dest/etc/devicectl/devicectl.yaml" configs/devicectl.yaml || fail "install.sh: the config differs"
grep -qx 'ExecStart=/usr/local/bin/devicectl run --config /etc/devicectl/devicectl.yaml' \
	"$dest/usr/local/lib/systemd/system/devicectl.service" || fail "install.sh: ExecStart is not /usr/local/bin/devicectl"
diff <(grep -v '^ExecStart=' configs/systemd/devicectl.service) \
	<(grep -v '^ExecStart=' "$dest/usr/local/lib/systemd/system/devicectl.service") >/dev/null ||
	fail "install.sh changed the unit beyond ExecStart"
if grep -q 'systemctl enable --now devicectl' "$tmp/install.out"; then
	fail "a DESTDIR install printed the next steps of a real one"
fi
if getent passwd devicectl >/dev/null; then fail "a DESTDIR install created the devicectl user"; fi
echo "# the operator's" >>"$dest/etc/devicectl/devicectl.yaml"
bash scripts/install.sh --destdir "$dest" --prefix /usr --binary dist/devicectl-linux-amd64 >/dev/null
grep -qx "# the operator's" "$dest/etc/devicectl/devicectl.yaml" || fail "install.sh overwrote an existing config"
cmp -s "$dest/usr/lib/systemd/system/devicectl.service" configs/systemd/devicectl.service ||
	fail "install.sh --prefix /usr: the unit differs from configs/systemd/devicectl.service"
for f in /usr/bin/devicectl /usr/lib/sysusers.d/devicectl.conf /usr/lib/tmpfiles.d/devicectl.conf; do
	[ -f "$dest$f" ] || fail "install.sh --prefix /usr: no $f"
done
ok "binary, unit (ExecStart follows --prefix), config kept on a second run, sysusers.d, tmpfiles.d"

step "make deb"
rm -f dist/devicectl_*.deb
describe=$(git describe --tags --always --dirty)
make deb VERSION="$describe"
version=$(bash scripts/deb.sh --version-of "$describe")
native=$(dpkg --print-architecture)

# The files each package holds (directories aside), with modes and owners.
contents="-rw-r--r-- root/root ./etc/devicectl/devicectl.yaml
-rw-r--r-- root/root ./lib/systemd/system/devicectl.service
-rwxr-xr-x root/root ./usr/bin/devicectl
-rw-r--r-- root/root ./usr/lib/sysusers.d/devicectl.conf
-rw-r--r-- root/root ./usr/lib/tmpfiles.d/devicectl.conf"
for arch in armhf arm64 amd64; do
	deb=dist/devicectl_${version}_$arch.deb
	[ -f "$deb" ] || fail "make deb did not write $deb"
	dpkg-deb --info "$deb" >/dev/null || fail "$deb: dpkg-deb --info fails"
	for f in Package:devicectl "Version:$version" "Architecture:$arch"; do
		got=$(dpkg-deb --field "$deb" "${f%%:*}")
		[ "$got" = "${f#*:}" ] || fail "$deb: ${f%%:*} is '$got', want '${f#*:}'"
	done
	got=$(dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ { print $1, $2, $6 }' | sort -k3)
	[ "$got" = "$contents" ] || fail "$deb holds:"$'\n'"$got"$'\n'"want:"$'\n'"$contents"
	rm -rf "$tmp/ctl" "$tmp/root"
	dpkg-deb --control "$deb" "$tmp/ctl"
	[ "$(cat "$tmp/ctl/conffiles")" = /etc/devicectl/devicectl.yaml ] || fail "$deb: conffiles is not the config"
	for s in postinst prerm postrm; do
		[ -x "$tmp/ctl/$s" ] || fail "$deb: no executable $s"
	done
	cmp -s "$tmp/ctl/postinst" packaging/postinstall.sh || fail "$deb: postinst is not packaging/postinstall.sh"
	dpkg-deb --extract "$deb" "$tmp/root"
	case $arch in
	armhf) bin=armv6 machine=40 ;; # EM_ARM; the ARMv6 build, which runs on every Pi
	arm64) bin=arm64 machine=183 ;; # EM_AARCH64
	amd64) bin=amd64 machine=62 ;;  # EM_X86_64
	esac
	cmp -s "$tmp/root/usr/bin/devicectl" "dist/devicectl-linux-$bin" || fail "$deb: /usr/bin/devicectl is not dist/devicectl-linux-$bin"
	got=$(od -An -tu2 -j18 -N2 "$tmp/root/usr/bin/devicectl" | tr -d ' ')
	[ "$got" = "$machine" ] || fail "$deb: /usr/bin/devicectl is for ELF machine $got, want $machine"
	cmp -s "$tmp/root/lib/systemd/system/devicectl.service" configs/systemd/devicectl.service || fail "$deb: the unit differs"
	cmp -s "$tmp/root/etc/devicectl/devicectl.yaml" configs/devicectl.yaml || fail "$deb: the config differs"
	ok "$deb: $arch, from devicectl-linux-$bin, $(stat -c %s "$deb") bytes"
done

deb=dist/devicectl_${version}_$native.deb
[ -f "$deb" ] || fail "no package for this machine's architecture ($native)"

step "dpkg -i $deb"
dpkg -i "$deb" >"$tmp/dpkg.out" 2>&1 || {
	cat "$tmp/dpkg.out" >&2
	fail "dpkg -i $deb"
}
cat "$tmp/dpkg.out"
grep -q '^devicectl: the service is not enabled or started: set server.url' "$tmp/dpkg.out" ||
	fail "postinst did not say the service is not started"
mode_owner /usr/bin/devicectl "755 root:root"
mode_owner /lib/systemd/system/devicectl.service "644 root:root"
mode_owner /etc/devicectl "755 root:root"
mode_owner /etc/devicectl/devicectl.yaml "644 root:root"
mode_owner /usr/lib/sysusers.d/devicectl.conf "644 root:root"
mode_owner /usr/lib/tmpfiles.d/devicectl.conf "644 root:root"
mode_owner /var/lib/devicectl "700 devicectl:devicectl"
ok "files and modes"
conffiles=$(dpkg-query --showformat='${Conffiles}' --show devicectl)
md5=$(md5sum </etc/devicectl/devicectl.yaml | cut -d' ' -f1)
[ "$(echo "$conffiles" | awk 'NF { print $1, $2 }')" = "/etc/devicectl/devicectl.yaml $md5" ] ||
	fail "conffiles registered: '$conffiles'"
ok "conffile registered: $(echo "$conffiles" | xargs)"

IFS=: read -r _ _ uid _ _ home shell < <(getent passwd devicectl) || fail "no devicectl user"
[ "$uid" -lt 1000 ] || fail "devicectl is not a system user (uid $uid)"
[ "$home" = /var/lib/devicectl ] || fail "devicectl's home is $home"
[[ $shell == */nologin ]] || fail "devicectl's shell is $shell"
groups=" $(id -nG devicectl) "
for g in devicectl $device_groups; do
	[[ $groups == *" $g "* ]] || fail "devicectl is not in group $g (groups:$groups)"
done
ok "user devicectl: uid $uid, home $home, shell $shell, groups:$groups"

devicectl version | grep -q '^devicectl ' || fail "devicectl version"
runuser -u devicectl -- devicectl version >/dev/null || fail "devicectl version as the devicectl user"
# The service user reads the packaged config (as `run` does), with simulated hardware.
runuser -u devicectl -- devicectl tools --config /etc/devicectl/devicectl.yaml --mac AA-BB-CC-DD-EE-FF \
	--hardware sim | grep -q mcp/registerTools || fail "devicectl tools --config /etc/devicectl/devicectl.yaml as devicectl"
ok "devicectl version, and tools --config /etc/devicectl/devicectl.yaml as the devicectl user"

step "systemd-analyze verify"
# It prints warnings (an unknown key, a missing binary) and still exits 0: any output fails.
for unit in /lib/systemd/system/devicectl.service configs/systemd/devicectl.service; do
	out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify $unit:"$'\n'"$out"
	[ -z "$out" ] || fail "systemd-analyze verify $unit is not clean:"$'\n'"$out"
done
# The check can fail: a misspelt key must be reported.
sed 's/^DeviceAllow=char-spi rw/DeviceAlow=char-spi rw/' configs/systemd/devicectl.service >"$tmp/devicectl.service"
out=$(systemd-analyze verify "$tmp/devicectl.service" 2>&1 || true)
[[ $out == *DeviceAlow* ]] || fail "systemd-analyze verify did not report a misspelt key: '$out'"
exposure=$(systemd-analyze security --offline=yes /lib/systemd/system/devicectl.service 2>&1 | grep 'Overall exposure' || true)
ok "clean (a misspelt key is reported); ${exposure#→ }"

step "dpkg -i again (reinstall, as an upgrade runs the scripts)"
dpkg -i "$deb" >"$tmp/dpkg.out" 2>&1 || {
	cat "$tmp/dpkg.out" >&2
	fail "reinstalling $deb"
}
[ "$(id -u devicectl)" = "$uid" ] || fail "the reinstall changed devicectl's uid"
ok "same user, uid $uid"

step "postinst without systemd-sysusers (the adduser fallback)"
userdel devicectl
for g in $new_groups; do groupdel "$g"; done
# A PATH with every command of this machine but systemd-sysusers.
mkdir "$tmp/bin"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	for f in "$d"/*; do
		n=${f##*/}
		[ "$n" = systemd-sysusers ] || [ -e "$tmp/bin/$n" ] || ln -s "$f" "$tmp/bin/$n"
	done
done
PATH=$tmp/bin sh /var/lib/dpkg/info/devicectl.postinst configure "$version" >"$tmp/postinst.out" 2>&1 || {
	cat "$tmp/postinst.out" >&2
	fail "postinst configure without systemd-sysusers"
}
groups=" $(id -nG devicectl) "
for g in devicectl $device_groups; do
	[[ $groups == *" $g "* ]] || fail "fallback: devicectl is not in group $g (groups:$groups)"
done
getent passwd devicectl | grep -q ':/var/lib/devicectl:/usr/sbin/nologin$' || fail "fallback: $(getent passwd devicectl)"
mode_owner /var/lib/devicectl "700 devicectl:devicectl"
ok "adduser made devicectl, groups:$groups"

step "dpkg -r devicectl"
# As an operator would leave it: a token (mode fixed by tmpfiles), an edited config, a Client-Id,
# the service enabled.
echo secret >/etc/devicectl/token
systemd-tmpfiles --create /usr/lib/tmpfiles.d/devicectl.conf
mode_owner /etc/devicectl/token "600 devicectl:devicectl"
echo "# the operator's" >>/etc/devicectl/devicectl.yaml
echo client-id >/var/lib/devicectl/client-id
systemctl enable devicectl.service >/dev/null 2>&1
wants=/etc/systemd/system/multi-user.target.wants/devicectl.service
[ -L "$wants" ] || fail "systemctl enable made no $wants"
dpkg -r devicectl >"$tmp/dpkg.out" 2>&1 || {
	cat "$tmp/dpkg.out" >&2
	fail "dpkg -r devicectl"
}
for f in /usr/bin/devicectl /lib/systemd/system/devicectl.service /usr/lib/sysusers.d/devicectl.conf \
	/usr/lib/tmpfiles.d/devicectl.conf "$wants"; do
	absent "$f"
done
grep -qx "# the operator's" /etc/devicectl/devicectl.yaml || fail "dpkg -r did not keep the edited config"
for f in /etc/devicectl/token /var/lib/devicectl/client-id; do
	[ -f "$f" ] || fail "dpkg -r did not keep $f"
done
status=$(dpkg-query -W -f='${Status}' devicectl)
[ "$status" = "deinstall ok config-files" ] || fail "status after dpkg -r: $status"
ok "binary, unit, sysusers.d, tmpfiles.d, enablement gone; config, token, state kept"

step "dpkg -P devicectl"
dpkg -P devicectl >"$tmp/dpkg.out" 2>&1 || {
	cat "$tmp/dpkg.out" >&2
	fail "dpkg -P devicectl"
}
absent /etc/devicectl
absent /var/lib/devicectl
if pkg_known; then fail "dpkg still knows devicectl: $(dpkg-query -W -f='${Status}' devicectl)"; fi
getent passwd devicectl >/dev/null || fail "purge removed the devicectl user (system users stay)"
ok "/etc/devicectl and /var/lib/devicectl gone; the user stays, as Debian leaves system users"

step "scripts/install.sh for real, without systemd-sysusers (the useradd fallback)"
userdel devicectl
for g in $new_groups; do groupdel "$g"; done
case $native in
armhf) native_bin=armv6 ;;
*) native_bin=$native ;;
esac
PATH=$tmp/bin bash scripts/install.sh --binary "dist/devicectl-linux-$native_bin" >"$tmp/install.out" 2>&1 || {
	cat "$tmp/install.out" >&2
	fail "install.sh without systemd-sysusers"
}
grep -q 'systemctl enable --now devicectl' "$tmp/install.out" || fail "install.sh printed no next steps"
mode_owner /usr/local/bin/devicectl "755 root:root"
mode_owner /usr/local/lib/systemd/system/devicectl.service "644 root:root"
mode_owner /etc/devicectl/devicectl.yaml "644 root:root"
mode_owner /var/lib/devicectl "700 devicectl:devicectl"
groups=" $(id -nG devicectl) "
for g in devicectl $device_groups; do
	[[ $groups == *" $g "* ]] || fail "install.sh: devicectl is not in group $g (groups:$groups)"
done
if ! out=$(systemd-analyze verify /usr/local/lib/systemd/system/devicectl.service 2>&1) || [ -n "$out" ]; then
	fail "systemd-analyze verify of install.sh's unit is not clean:"$'\n'"$out"
fi
runuser -u devicectl -- /usr/local/bin/devicectl version >/dev/null || fail "install.sh: devicectl version as devicectl"
ok "useradd made devicectl, groups:$groups; the unit verifies"

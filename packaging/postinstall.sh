#!/bin/sh
# devicectl postinst (nfpm's postinstall): `postinst configure [OLD_VERSION]`.
# Creates the devicectl user and its device groups, sets up its directories and tells systemd about
# the unit. It never enables or starts the service: server.url must be set first. An upgrade
# restarts the service only if it was running.
# POSIX sh, as Debian's maintainer scripts are (dpkg runs them with /bin/sh semantics in mind).
# systemd may not be PID 1 (a container, a chroot, CI): every systemctl call tolerates that.
set -eu

user=devicectl
device_groups="audio i2c spi gpio"
unit=devicectl.service

case "${1:-}" in
configure) ;;
abort-upgrade | abort-remove | abort-deconfigure) exit 0 ;;
*)
	echo "devicectl postinst: unknown argument '${1:-}'" >&2
	exit 1
	;;
esac
old_version=${2:-}

# The user, its group and the device groups (created when missing: the unit will not start without
# them), from the sysusers.d file; adduser does the same where systemd-sysusers is missing.
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers /usr/lib/sysusers.d/devicectl.conf
else
	for g in $device_groups; do
		getent group "$g" >/dev/null || addgroup --system --quiet "$g"
	done
	if ! getent passwd "$user" >/dev/null; then
		adduser --system --group --quiet --home /var/lib/devicectl --no-create-home \
			--shell /usr/sbin/nologin --comment "devicectl device agent" "$user"
	fi
fi
# Membership of every device group that exists (sysusers or a site may have skipped one).
for g in $device_groups; do
	if getent group "$g" >/dev/null && ! id -nG "$user" | tr ' ' '\n' | grep -qx "$g"; then
		usermod -a -G "$g" "$user"
	fi
done

# /var/lib/devicectl (0700 devicectl) and the token file's mode, from the tmpfiles.d file.
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	systemd-tmpfiles --create /usr/lib/tmpfiles.d/devicectl.conf
else
	install -d -m 0700 -o "$user" -g "$user" /var/lib/devicectl
	if [ -e /etc/devicectl/token ]; then
		chown "$user:$user" /etc/devicectl/token
		chmod 0600 /etc/devicectl/token
	fi
fi

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || echo "devicectl postinst: systemctl daemon-reload failed" >&2
	# An upgrade: the running service (if any) moves to the new binary.
	if [ -n "$old_version" ]; then
		systemctl try-restart "$unit" || echo "devicectl postinst: restarting $unit failed" >&2
	fi
fi

if ! command -v systemctl >/dev/null 2>&1 || ! systemctl --quiet is-enabled "$unit" 2>/dev/null; then
	echo "devicectl: the service is not enabled or started: set server.url in /etc/devicectl/devicectl.yaml, then run: systemctl enable --now devicectl"
fi
exit 0

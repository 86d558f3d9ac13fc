#!/bin/sh
# devicectl prerm (nfpm's preremove): `prerm remove`, `prerm upgrade NEW_VERSION`, ...
# On removal: stops the service if it runs and disables it (the unit file is still there, so
# systemctl knows what to undo). An upgrade leaves it running; the new postinst restarts it.
# systemd may not be PID 1 (a container, a chroot, CI): stop only when it is; disable works offline.
set -eu

unit=devicectl.service

case "${1:-}" in
remove | deconfigure)
	if [ -d /run/systemd/system ]; then
		systemctl stop "$unit" || echo "devicectl prerm: stopping $unit failed" >&2
	fi
	if command -v systemctl >/dev/null 2>&1; then
		systemctl --quiet disable "$unit" || echo "devicectl prerm: disabling $unit failed" >&2
	fi
	;;
upgrade | failed-upgrade) ;;
*)
	echo "devicectl prerm: unknown argument '${1:-}'" >&2
	exit 1
	;;
esac
exit 0

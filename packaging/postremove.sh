#!/bin/sh
# devicectl postrm (nfpm's postremove): `postrm remove`, `postrm purge`, `postrm upgrade ...`, ...
# remove: the binary and unit are gone; /etc/devicectl (the config, the token) and
#         /var/lib/devicectl (the Client-Id the server knows this device by) stay.
# purge:  those go too (dpkg has already removed the conffile). The devicectl user and the groups
#         stay, as Debian leaves system users: files owned by its uid may remain elsewhere.
set -eu

unit=devicectl.service

case "${1:-}" in
remove | purge)
	if [ "$1" = purge ]; then
		rm -rf /etc/devicectl /var/lib/devicectl
		# An enablement left behind by a removal that could not run systemctl.
		rm -f "/etc/systemd/system/multi-user.target.wants/$unit"
	fi
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload || echo "devicectl postrm: systemctl daemon-reload failed" >&2
	fi
	;;
upgrade | failed-upgrade | abort-install | abort-upgrade | disappear) ;;
*)
	echo "devicectl postrm: unknown argument '${1:-}'" >&2
	exit 1
	;;
esac
exit 0

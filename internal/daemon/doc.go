// Package daemon is `devicectl run` without its command line: the device agent and the parts one
// configuration builds for it (identity and credentials, hardware, tools, tool sets, hooks, the
// renderer, the OpenTool server), kept in force while the agent runs.
//
// New(cfg, opts) makes a daemon; Run(ctx) runs it until ctx ends. Reload reads the configuration
// again (Options.Load) and puts it in force only when every part of it is good, rolling back
// otherwise: a bad new configuration changes nothing. Under systemd (NOTIFY_SOCKET) the daemon
// says READY=1 at its first registration, keeps STATUS= current, feeds the watchdog while the
// session loop is healthy and reports reloads.
package daemon

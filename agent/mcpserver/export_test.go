//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver

// MaxLater is maxLater, for the tests.
const MaxLater = maxLater

// Package sockdir gives a test a directory for a Unix socket (a device's control socket, a
// server's listener). A socket's path may hold 107 bytes at most, and t.TempDir's paths carry up
// to 64 bytes of the test's name on top of the temporary directory's, so the tests of
// internal/control, internal/daemon and cmd/devicectl take their socket directories from here.
package sockdir

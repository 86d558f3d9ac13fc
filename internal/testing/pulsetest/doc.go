// Package pulsetest starts a private PulseAudio daemon with a null sink, so
// the amixer and pactl backends can be tested against a real mixer on a
// machine with no sound card (this project's CI has no ALSA in its kernel).
//
// Fake and Calls stand in for a mixer program where no real one can show an error path (a
// failing or hung amixer, wpctl without PipeWire) and record how it was run.
//
// It also holds the rule for tests that need an external program: when the
// environment variable DEVICECTL_REQUIRE_HW is "1" (CI sets it) a missing
// program fails the test, so a machine that lost a package cannot turn the
// hardware tests into silent skips; otherwise the test is skipped with the
// Debian package to install.
//
// Start changes the test's environment (PULSE_SERVER, HOME,
// XDG_RUNTIME_DIR) with t.Setenv, so the programs the backends exec find
// the private daemon and leave the real home alone. Such tests cannot run
// in parallel, which t.Setenv enforces.
package pulsetest

// Package haltest provides fakes of the hal interfaces for unit tests of
// code that drives hardware (tools, the agent).
//
// A fake behaves like a conforming device (it validates input the way the
// interface says, keeps the value set, mutes or goes idle on Halt), records
// every call in order, including failed ones, and returns the error a test
// injects. Record checks read like this:
//
//	spk := &haltest.Speaker{Level: 50}
//	... run the code under test ...
//	want := []string{"SetVolume(80)", "Volume()"}
//	if got := spk.Calls(); !slices.Equal(got, want) { ... }
//
// Set the exported fields before the fake is shared with other goroutines;
// the methods are safe for concurrent use.
package haltest

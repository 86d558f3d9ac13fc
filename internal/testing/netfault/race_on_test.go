//go:build race

package netfault

// raceEnabled: the test runs under -race, so the device is built with -race too, and a data race
// that the faults provoke in it fails its exit status (66) and shows in its log.
const raceEnabled = true

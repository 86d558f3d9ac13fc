//go:build !race

package netfault

const raceEnabled = false

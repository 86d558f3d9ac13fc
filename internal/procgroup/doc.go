// Package procgroup runs the programs devicectl starts for the user (a face program, a speech
// command) in a process group of their own, so that stopping one stops what it started too: a
// wrapper script running "piper | aplay", or an animation a face script forked, would otherwise
// outlive it and overlap the next run.
package procgroup

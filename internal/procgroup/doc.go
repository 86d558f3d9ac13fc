// Package procgroup runs the programs devicectl starts for the user (a face program, a speech
// command, a hook) in a process group of their own, so that stopping one stops what it started
// too: a wrapper script running "piper | aplay", or an animation a face script forked, would
// otherwise outlive it and overlap the next run.
//
// KillGroup makes a cancelled command take its group with it. Run goes further, for programs
// whose children have no business outliving them (hooks): once the program has exited, however
// it ended, what is left of its group is killed. The group is killed while the exited program is
// still a zombie, not yet reaped, so its process id, which is the group's, cannot have been
// handed to another process.
package procgroup

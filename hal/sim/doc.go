// Package sim provides simulated hardware for running devicectl on a laptop:
// a Speaker and a Face that keep their state in memory and report every
// change through an OnChange callback (which a terminal UI uses to show the
// volume and draw the face with hal/faces).
//
// Both are safe for concurrent use. Callbacks run synchronously in the
// goroutine that made the change, after the state lock is released, and are
// serialised in the order the changes happened, so the last callback always
// reports the current state. A callback may read the device (Volume,
// Expression) but must not change it (SetVolume, SetExpression, Halt): that
// would wait for itself.
//
// By default every method returns at once. SpeakerOptions.Latency and FaceOptions.Latency make
// a part take time, as a real one on a bus does: the device then runs its calls as a real
// board's (see tools.Tool.Inline).
//
// Halt means "go inert", as in periph: the speaker mutes (volume 0) and the
// face shows hal.Idle. Neither is broken by Halt; a later set works again.
package sim

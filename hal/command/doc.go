// Package command shows hal.Expressions by running a program: the way to
// drive a face devicectl has no backend for (a Python script on a round
// LCD, an animation player, a servo) without writing Go.
//
// The face is configured as an argument list, program first. To show an
// expression the program runs with the expression's name appended as one
// more argument:
//
//	argv:  ["/usr/local/bin/show-face", "--display", "/dev/fb1"]
//	runs:  /usr/local/bin/show-face --display /dev/fb1 smile
//
// The name is one of the six of hal.Expressions (close_eyes_smile,
// close_eyes, amazed, smile, cry, idle); anything else is rejected before
// a program runs. No shell is involved: the arguments reach the program as
// they are written, so quotes, $, ; or * in them mean nothing special. To
// use a shell script, make it executable with a #! line, or configure
// ["/bin/sh", "/path/to/script"].
//
// # The program's side
//
// Exit status 0 means the expression is shown; anything else is a failure,
// reported with the end of what the program wrote to stderr (stdin and
// stdout are /dev/null). A run that outlasts the timeout (5 s unless
// Options say otherwise) or its caller's context is killed and is a
// failure too; only the program itself is killed, not children it started,
// and those should not keep its stderr open: a run ends at most a second
// after the program does. Runs never overlap: the next waits for the one
// before to end.
//
// # Behaviour
//
// New finds the program (through PATH when it has no slash) and runs it
// with the initial expression, hal.Idle unless Options say otherwise, so a
// missing or broken program is an error at start-up. Expression returns
// the last expression the program accepted. Halt runs the program with
// idle, because the display behind it can only be reached through it and
// a halted face shows hal.Idle, as in hal/sim; it is bounded by the
// timeout. There is no wiring: whatever the program drives is its own
// affair, and it runs as devicectl's user with devicectl's environment.
package command

// Package reminders is the agent's reminders and timers: kept in the agent's database beside
// memories and tasks, so they survive restarts, and fired by whichever serve process claims each
// occurrence first in that database, so several processes on one store speak it once.
//
// A reminder is due at an instant (At), after a while (In: a timer when it has no text of its
// own) or every day or week at a clock time (Every), in the agent's time zone, daylight-saving
// changes included. When due it is spoken on its device; a device offline then gets it when it
// comes back within the grace period, after which it is recorded as missed and told at the
// device's next turn.
package reminders

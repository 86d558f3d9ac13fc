// Package ptytest gives tests a real pseudo-terminal (Linux), to drive what devicectl does when a
// person types at a terminal: line editing, the prompt, Ctrl-C. Open makes the pair; Read collects
// what the program shows, and Screen.WaitCount waits for it rather than for a clock.
package ptytest

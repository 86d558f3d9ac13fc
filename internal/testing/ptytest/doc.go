// Package ptytest gives tests a real pseudo-terminal (Linux), to drive what devicectl does when a
// person types at a terminal: line editing, the prompt, Ctrl-C. Open makes the pair and Resize
// sets its size; Read collects what the program shows, and Screen.WaitCount waits for it rather
// than for a clock. VT, on any system, is a small VT100 screen that applies what was shown to a
// grid of cells, so a test reads what a person would see: which characters, in which rows,
// where the cursor is.
package ptytest

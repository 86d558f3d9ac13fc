// Package safefile reads the files a user names in the configuration (the config file itself,
// tokens and key files, tool set documents) without trusting the path to lead to a small regular
// file. A path may be a FIFO, whose open blocks until a writer comes, or a symlink to /dev/zero,
// which never ends; either would hang a reload or fill the memory of a small board.
//
// Open opens without blocking (O_NONBLOCK on Unix, so a FIFO's open returns at once), then checks
// the file it opened with fstat rather than the path, so the file cannot be swapped between check
// and read. ReadFile adds a size cap on top: anything larger is refused, not cut.
package safefile

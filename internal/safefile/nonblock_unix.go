//go:build unix

package safefile

import "syscall"

// nonBlock makes the open of a FIFO return at once instead of waiting for a writer. It changes
// nothing for a regular file.
const nonBlock = syscall.O_NONBLOCK

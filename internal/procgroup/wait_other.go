//go:build unix && !linux

package procgroup

import "errors"

// waitExited is not implemented here: Run then waits as cmd.Run does, and kills nothing after.
func waitExited(int) error { return errors.ErrUnsupported }

package mixerexec

import "context"

// turn lets one mixer operation (a set and its read-back, say) run at a time, so a read-back sees
// its own set. Unlike a mutex, waiting for it gives up when the caller's context ends: a hung
// mixer program must not stall every later call past its deadline.
type turn chan struct{}

// newTurn returns a turn that is free.
func newTurn() turn { return make(turn, 1) }

// take waits for the turn, or returns ctx's error.
func (t turn) take(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give hands the turn back; call it once after each successful take.
func (t turn) give() { <-t }

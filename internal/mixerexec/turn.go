package mixerexec

import "context"

// Turn lets one mixer operation (a set and its read-back, say) run at a time, so a read-back sees
// its own set. Unlike a mutex, waiting for it gives up when the caller's context ends: a hung
// mixer program must not stall every later call past its deadline.
type Turn chan struct{}

// NewTurn returns a Turn that is free.
func NewTurn() Turn { return make(Turn, 1) }

// Take waits for the turn, or returns ctx's error.
func (t Turn) Take(ctx context.Context) error {
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

// Give hands the turn back; call it once after each successful Take.
func (t Turn) Give() { <-t }

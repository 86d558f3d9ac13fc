package hal

import (
	"context"
	"sync"
)

// Shown holds the expression a face last showed, for faces that cannot read it back from their
// hardware: their Expression returns it. A face runs its changes one at a time under a lock of its
// own and records each here once it took; Shown guards the expression alone, so a reader never
// waits behind a frame being sent. The zero value holds "".
type Shown struct {
	mu sync.Mutex
	e  Expression
}

// Set records e and reports whether it differs from the expression before.
func (s *Shown) Set(e Expression) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed = s.e != e
	s.e = e
	return changed
}

// Get returns the expression last set, or ctx's error once ctx has ended.
func (s *Shown) Get(ctx context.Context) (Expression, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e, nil
}

package sim

import (
	"context"
	"time"

	"github.com/devicectl/devicectl/internal/sleep"
)

// take waits d, the time a real part's transfer takes, or until ctx is done. With d zero it
// only checks ctx.
func take(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return sleep.For(ctx, d)
}

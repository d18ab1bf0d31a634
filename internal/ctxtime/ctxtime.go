// Package ctxtime holds the one sleep that stops when its context ends.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d and returns nil, or returns ctx.Err() as soon as ctx
// ends. A d of zero or less returns ctx.Err() at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package explore

import (
	"context"
	"sync"
	"time"
)

// deadline bounds a history's run, as context.WithTimeout does, except
// that each LapseFenceLeases moves it later by the store's lease: a store
// may lapse its leases by waiting that long, and a history may lapse
// many times.
type deadline struct {
	mu    sync.Mutex
	at    time.Time
	timer *time.Timer
}

// withDeadline returns a context that ends d from now, or later by what
// extend adds, and the deadline. Call stop to release the timer.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, *deadline, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	dl := &deadline{at: time.Now().Add(d)}
	dl.timer = time.AfterFunc(d, cancel)
	return ctx, dl, func() {
		dl.timer.Stop()
		cancel()
	}
}

// extend moves the deadline later by d, unless it has passed.
func (dl *deadline) extend(d time.Duration) {
	if d <= 0 {
		return
	}
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if !dl.timer.Stop() {
		return // it fired: the history has ended
	}
	dl.at = dl.at.Add(d)
	dl.timer.Reset(time.Until(dl.at))
}

package writer

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/conform-spi/conform/internal/ctxtime"
)

// Clock is the writer's own clock: the self-fence check, the renewer, the
// takeover wait and the background sweep all run on it, never on the
// store's clock. SystemClock is the wall clock; ManualClock is
// a clock a test or a harness drives.
type Clock interface {
	// Now returns the clock's current instant.
	Now() time.Time
	// Sleep waits d on the clock, or until ctx ends (returning ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc runs f once the clock has moved d past now, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop keeps the function from running; it returns false when the
	// function already ran or was stopped.
	Stop() bool
}

// SystemClock returns the wall clock: Sleep waits in real time and
// AfterFunc runs f on a goroutine of its own (time.AfterFunc).
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	return ctxtime.Sleep(ctx, d)
}

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// ManualClock is virtual time for deterministic runs: it moves only when
// told to (Advance, Pause) or when a Sleep on it passes its time at once.
// Timers fire synchronously, in the goroutine that moves the clock, in
// deadline order (ties in the order they were set), each with the clock set
// to its deadline; no lock is held while one runs, so a timer may use the
// clock. Every writer and fake sharing one ManualClock sees the same time
// pass, as processes on one machine do. It is safe for concurrent use, but
// the order in which two goroutines moving it at once fire timers is not
// deterministic: drive it from one goroutine at a time.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*manualTimer
}

// ManualEpoch is the instant a NewManualClock starts at.
var ManualEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewManualClock returns a clock at ManualEpoch.
func NewManualClock() *ManualClock { return &ManualClock{now: ManualEpoch} }

type manualTimer struct {
	c        *ManualClock
	deadline time.Time
	seq      uint64
	f        func()
	done     bool // fired or stopped; guarded by c.mu
}

// Stop keeps the timer from firing.
func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	t.c.removeLocked(t)
	return true
}

// Now returns the clock's instant.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since returns how far the clock is past t.
func (c *ManualClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// AfterFunc sets f to run when the clock reaches now+d (at once, on the
// next move of the clock, when d <= 0).
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{c: c, deadline: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	i := sort.Search(len(c.timers), func(i int) bool { return t.before(c.timers[i]) })
	c.timers = append(c.timers, nil)
	copy(c.timers[i+1:], c.timers[i:])
	c.timers[i] = t
	return t
}

func (t *manualTimer) before(u *manualTimer) bool {
	if !t.deadline.Equal(u.deadline) {
		return t.deadline.Before(u.deadline)
	}
	return t.seq < u.seq
}

func (c *ManualClock) removeLocked(t *manualTimer) {
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// Advance moves the clock forward by d, firing every timer whose deadline
// it passes, each at its own deadline: time passes as it does for a live
// process. A negative d panics: the clock never moves back.
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("writer: ManualClock advanced by a negative duration %s", d))
	}
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		if len(c.timers) == 0 || c.timers[0].deadline.After(target) {
			if target.After(c.now) {
				c.now = target
			}
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		t.done = true
		if t.deadline.After(c.now) {
			c.now = t.deadline
		}
		c.mu.Unlock()
		t.f()
	}
}

// Pause moves the clock forward by d at once, as a process that was frozen
// (stopped, swapped out, a long collector pause) sees it: the timers it
// passed fire late, after the jump, with the clock already at its new
// instant. A negative d panics.
func (c *ManualClock) Pause(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("writer: ManualClock paused by a negative duration %s", d))
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	c.Advance(0)
}

// Sleep passes d at once (Advance), so a wait costs no real time; it
// returns ctx.Err() when ctx has ended.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}

// Pending counts the timers not fired or stopped yet.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

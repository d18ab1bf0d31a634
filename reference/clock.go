package reference

import (
	"fmt"
	"sync/atomic"
	"time"
)

// clockEpoch is the instant every Clock starts at.
var clockEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// Clock is a manual clock: the store's own clock, on which leases are
// recorded (docs/host-store-contract.md#fence-leases). It starts at a fixed instant
// (2025-01-01T00:00:00Z) and moves only by Advance. It is safe for
// concurrent use.
type Clock struct {
	offset atomic.Int64 // nanoseconds since clockEpoch
}

// NewClock returns a clock at its fixed starting instant.
func NewClock() *Clock { return &Clock{} }

// Now returns the clock's current instant.
func (c *Clock) Now() time.Time { return clockEpoch.Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d. A clock never moves back: a
// negative d panics, since a lease measured on it would grow.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("reference: clock advanced by a negative duration %s", d))
	}
	c.offset.Add(int64(d))
}

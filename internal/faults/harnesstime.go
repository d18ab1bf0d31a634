package faults

import (
	"sync"
	"time"
)

// harnessClock accumulates the time in which the harness itself holds or
// delays a commit inside a store for one injector: a Hold waiting for its
// decision, a sleep term. A store may rightly wait on such a commit (its
// locks stay taken), so no store call's bound runs meanwhile.
type harnessClock struct {
	sync.Mutex
	n     int           // holds and sleeps in progress
	since time.Time     // when n last went from 0 to 1
	total time.Duration // closed spans of n > 0
}

// begin marks the start of a wait the harness imposes on a commit; the
// function it returns marks its end.
func (c *harnessClock) begin() func() {
	c.Lock()
	if c.n == 0 {
		c.since = time.Now()
	}
	c.n++
	c.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.Lock()
			c.n--
			if c.n == 0 {
				c.total += time.Since(c.since)
			}
			c.Unlock()
		})
	}
}

// HarnessTime returns how long, in all since the injector was made, it
// has held or delayed at least one commit inside a store (a Hold waiting
// for its decision, an in-store or wrapper sleep term), counting a wait
// still in progress up to now. The difference of two readings is the
// harness's share of the time between them, which a store call's bound
// does not count.
func (i *Injector) HarnessTime() time.Duration {
	c := &i.clock
	c.Lock()
	defer c.Unlock()
	d := c.total
	if c.n > 0 {
		d += time.Since(c.since)
	}
	return d
}

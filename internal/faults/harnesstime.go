package faults

import (
	"sync"
	"time"
)

// harnessTime accumulates the time in which the harness itself holds or
// delays a commit inside a store: a Hold waiting for its decision, a sleep
// term. A store may rightly wait on such a commit (its locks stay taken),
// so no store call's bound runs meanwhile.
var harnessTime struct {
	sync.Mutex
	n     int           // holds and sleeps in progress
	since time.Time     // when n last went from 0 to 1
	total time.Duration // closed spans of n > 0
}

// beginHarnessWait marks the start of a wait the harness imposes on a
// commit; the function it returns marks its end.
func beginHarnessWait() func() {
	harnessTime.Lock()
	if harnessTime.n == 0 {
		harnessTime.since = time.Now()
	}
	harnessTime.n++
	harnessTime.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			harnessTime.Lock()
			harnessTime.n--
			if harnessTime.n == 0 {
				harnessTime.total += time.Since(harnessTime.since)
			}
			harnessTime.Unlock()
		})
	}
}

// HarnessTime returns how long, in all since the process started, the
// harness has held or delayed at least one commit inside a store (a Hold
// waiting for its decision, an in-store or wrapper sleep term), counting
// a wait still in progress up to now. The difference of two readings is
// the harness's share of the time between them, which a store call's
// bound does not count.
func HarnessTime() time.Duration {
	harnessTime.Lock()
	defer harnessTime.Unlock()
	d := harnessTime.total
	if harnessTime.n > 0 {
		d += time.Since(harnessTime.since)
	}
	return d
}

package chapter

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// The rules by which the harness judges a store's time. docs/timing.md
// states them for store authors.
const (
	// CallFloor is the least per-call bound the harness derives.
	CallFloor = 2 * time.Second
	// CallCap is the most per-call bound the harness derives; it is also
	// the bound of a call before the store answered any.
	CallCap = 30 * time.Second
	// CallFactor times the 99th percentile of a store's latency so far is
	// its derived per-call bound, between CallFloor and CallCap.
	CallFactor = 10
	// StallFloor is the least time the stall rows wait for a commit on
	// another scope while one is held.
	StallFloor = time.Second
	// StallFactor times the 99th percentile of the store's commit latency
	// so far is how long the stall rows wait, at least StallFloor.
	StallFactor = 20
	// MinCallTimeout is the least per-call bound a run may set.
	MinCallTimeout = 100 * time.Millisecond
	// MinRowTimeout is the least spec bound a run may set.
	MinRowTimeout = time.Second
)

// Timing is what a run saw of the store's time, and whether the store
// became unavailable. One Timing serves every chapter of a run, so a
// chapter starts with what the ones before it saw. It is safe for
// concurrent use.
type Timing struct {
	fixed time.Duration // the run's own per-call bound (0: derived)

	mu   sync.Mutex
	ops  map[string]*histogram
	all  histogram
	down string // why the store is unavailable ("" while it serves)
}

// NewTiming returns a Timing that has seen nothing yet. callTimeout, when
// positive, is the per-call bound of every call; zero derives it from the
// store's latency (CallBound).
func NewTiming(callTimeout time.Duration) *Timing {
	return &Timing{fixed: callTimeout, ops: map[string]*histogram{}}
}

// CallBound returns how long the next call of op may take before the
// harness calls it a hang, and the rule that gave it, in words. It is the
// run's call timeout when one was set. Otherwise it is CallFactor times the
// 99th percentile of the latencies of op seen so far (of every operation,
// while op has none), at least CallFloor and at most CallCap; CallCap
// while the store has answered no call at all.
func (t *Timing) CallBound(op string) (time.Duration, string) {
	if t.fixed > 0 {
		return t.fixed, fmt.Sprintf("%s, the run's call timeout", t.fixed)
	}
	t.mu.Lock()
	h, name := t.ops[op], op
	if h == nil || h.n == 0 {
		h, name = &t.all, "every operation's"
	}
	n, p99 := h.n, h.quantile(0.99)
	t.mu.Unlock()
	if n == 0 {
		return CallCap, fmt.Sprintf("%s, the cap: the store answered no call yet", CallCap)
	}
	d := min(max(CallFactor*p99, CallFloor), CallCap)
	return d, fmt.Sprintf("%s = %d × the 99th percentile of %d %s latencies (%s), at least %s, at most %s", d, CallFactor, n, name, p99, CallFloor, CallCap)
}

// StallBound returns how long a row waits for a commit on another scope,
// while one commit is held, before it calls a stall, and the rule in
// words: StallFactor times the 99th percentile of the store's commit
// latency so far, at least StallFloor.
func (t *Timing) StallBound() (time.Duration, string) {
	t.mu.Lock()
	h := t.ops["Commit"]
	var n int
	var p99 time.Duration
	if h != nil {
		n, p99 = h.n, h.quantile(0.99)
	}
	t.mu.Unlock()
	d := max(StallFactor*p99, StallFloor)
	return d, fmt.Sprintf("%s = %d × the 99th percentile of %d commit latencies (%s), at least %s", d, StallFactor, n, p99, StallFloor)
}

// Observe records that a call of op answered after d, for calls the
// harness makes outside a row (the exploration chapter's).
func (t *Timing) Observe(op string, d time.Duration) { t.observe(op, d) }

// observe records that a call of op answered after d of the store's time.
func (t *Timing) observe(op string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.ops[op]
	if h == nil {
		h = &histogram{}
		t.ops[op] = h
	}
	h.add(d)
	t.all.add(d)
}

// Down returns why the store became unavailable, or "" while it serves.
func (t *Timing) Down() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.down
}

// setDown records why the store became unavailable; the first reason
// stays.
func (t *Timing) setDown(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down == "" {
		t.down = why
	}
}

// histogram counts latencies in buckets that grow by histRatio from 1 µs;
// a quantile is the upper edge of its bucket, so it errs high by less
// than the ratio.
type histogram struct {
	n       int
	buckets [histBuckets]int
}

const (
	histBuckets = 128
	histRatio   = 1.2
)

func (h *histogram) add(d time.Duration) {
	i := 0
	if d > time.Microsecond {
		i = int(math.Log(float64(d)/float64(time.Microsecond))/math.Log(histRatio)) + 1
	}
	h.buckets[min(i, histBuckets-1)]++
	h.n++
}

// quantile returns the q-quantile of what h counted (0 when nothing).
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	want := int(math.Ceil(q * float64(h.n)))
	seen := 0
	for i, c := range h.buckets {
		seen += c
		if seen >= want {
			return time.Duration(float64(time.Microsecond) * math.Pow(histRatio, float64(i))).Round(time.Microsecond)
		}
	}
	return CallCap
}

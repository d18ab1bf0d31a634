package explore

import (
	"fmt"
	"math/rand/v2"

	"github.com/conform-spi/conform/hoststore"
)

// plan is what one history's seed decides before it runs: how many
// processes, how many operations each sends, and the scopes they write.
// Each process then draws every choice from its own PCG stream, seeded
// from the history's seed and its number, against what it has seen so far.
type plan struct {
	seed  uint64
	procs int
	steps []int // operations per process
	pool  []hoststore.ScopeRef
}

// step is what a process does next.
type step uint8

const (
	stepAcquire step = iota
	stepRenew
	stepLapse
	stepLoad
	stepList
	stepRead
	stepCommit
	stepResend
	stepFaultCommit
	stepKill
	nSteps
)

// weights of the steps, in the order above: commits and reads dominate.
var stepWeights = [nSteps]int{stepAcquire: 5, stepRenew: 6, stepLapse: 2, stepLoad: 13, stepList: 7, stepRead: 12,
	stepCommit: 32, stepResend: 6, stepFaultCommit: 9, stepKill: 4}

var poolNames = []hoststore.ScopeName{"a", "b", "c", "d", "e", "f"}

// oddNames are names a quarter of the histories draw from instead: names
// that differ only by a trailing space, and names whose order by UTF-8
// bytes (which listings follow) is not their order by UTF-16 code units
// (U+FF61 sorts before U+1F600 in bytes, after it in UTF-16).
var oddNames = []hoststore.ScopeName{"a", "a ", "b", "\uff61", "\U0001F600", "\u00e9"}

// newPlan draws a history's shape from seed: 1 to maxProcs processes, a
// length from a few operations to maxOps (short ones common, long ones
// regular), and a pool of 2 to 5 scopes over one or two kinds (Session,
// and one of the others half the time), so that batches collide often.
func newPlan(seed uint64, maxOps, maxProcs int) plan {
	rng := rand.New(rand.NewPCG(seed, 0x6578706c6f7265))
	p := plan{seed: seed, procs: 1 + rng.IntN(max(maxProcs, 1))}
	var total int
	switch r := rng.IntN(10); {
	case r < 3:
		total = 3 + rng.IntN(min(20, maxOps))
	case r < 7:
		total = 3 + rng.IntN(min(80, maxOps))
	default:
		total = 3 + rng.IntN(maxOps)
	}
	total = min(total, maxOps)
	for i := range p.procs {
		n := total / p.procs
		if i < total%p.procs {
			n++
		}
		p.steps = append(p.steps, n)
	}
	kinds := []hoststore.ScopeKind{hoststore.KindSession}
	if rng.IntN(2) == 0 {
		kinds = append(kinds, hoststore.AllKinds[1+rng.IntN(len(hoststore.AllKinds)-1)])
	}
	names := poolNames
	if rng.IntN(4) == 0 {
		names = oddNames
	}
	n := 2 + rng.IntN(4)
	for _, i := range rng.Perm(len(names))[:n] {
		p.pool = append(p.pool, hoststore.ScopeRef{Kind: kinds[rng.IntN(len(kinds))], Name: names[i]})
	}
	return p
}

// procRNG returns process proc's stream of choices.
func (p plan) procRNG(proc int) *rand.Rand {
	return rand.New(rand.NewPCG(p.seed, uint64(proc)+1))
}

// belief is what a process last saw of a scope.
type belief struct {
	live       bool
	version    hoststore.ScopeVersion
	start, end hoststore.RowIndex
}

// chooser draws one process's choices.
type chooser struct {
	rng  *rand.Rand
	pool []hoststore.ScopeRef
}

func (c *chooser) step() step {
	total := 0
	for _, w := range stepWeights {
		total += w
	}
	r := c.rng.IntN(total)
	for s, w := range stepWeights {
		if r < w {
			return step(s)
		}
		r -= w
	}
	return stepLoad
}

func (c *chooser) pct(p int) bool { return c.rng.IntN(100) < p }

func (c *chooser) scope() hoststore.ScopeRef { return c.pool[c.rng.IntN(len(c.pool))] }

// kind returns a kind of the pool.
func (c *chooser) kind() hoststore.ScopeKind { return c.scope().Kind }

// around returns an index from one below lo to two past hi.
func (c *chooser) around(lo, hi hoststore.RowIndex) hoststore.RowIndex {
	if lo > 0 {
		lo--
	}
	return lo + hoststore.RowIndex(c.rng.IntN(int(hi-lo)+3))
}

// limit returns a limit for n entries left: 1, exactly n, a few, or many.
func (c *chooser) limit(n int) int {
	switch c.rng.IntN(4) {
	case 0:
		return 1
	case 1:
		return max(n, 1)
	case 2:
		return 1 + c.rng.IntN(4)
	}
	return 64
}

// batch returns the updates of a new batch id over one to three scopes of
// the pool, written from the beliefs in view: mostly creates of scopes
// believed absent and updates at the believed version, and also creates
// of names believed live, updates at stale and future versions, deletes,
// truncates, drops and appends in any mix.
func (c *chooser) batch(id hoststore.CommitID, view map[hoststore.ScopeRef]*belief) []hoststore.ScopeUpdate {
	n := 1
	if r := c.rng.IntN(100); r >= 50 {
		n = 2
		if r >= 85 {
			n = 3
		}
	}
	n = min(n, len(c.pool))
	var ups []hoststore.ScopeUpdate
	for _, i := range c.rng.Perm(len(c.pool))[:n] {
		s := c.pool[i]
		b := view[s]
		if b == nil {
			b = &belief{}
		}
		u := hoststore.ScopeUpdate{Scope: s}
		rows := func(k int) {
			for r := range k {
				u.Append = append(u.Append, fmt.Appendf(nil, "%s/%s/%d", id, s.Name, r))
			}
		}
		create := !b.live && c.pct(85) || b.live && c.pct(6)
		if create {
			u.Next = hoststore.FirstVersion
			u.Head = hoststore.Ptr(fmt.Appendf(nil, "h-%s", id))
			if c.pct(60) {
				rows(1 + c.rng.IntN(3))
			}
			ups = append(ups, u)
			continue
		}
		v := b.version
		switch r := c.rng.IntN(100); {
		case !b.live || v == 0:
			v = hoststore.ScopeVersion(1 + c.rng.IntN(3))
		case r < 10 && v > 1:
			v--
		case r < 20:
			v++
		}
		u.Previous, u.Next = hoststore.Ptr(v), v+1
		if c.pct(10) {
			u.Delete = true
			ups = append(ups, u)
			continue
		}
		if c.pct(70) {
			u.Head = hoststore.Ptr(fmt.Appendf(nil, "h-%s", id))
		}
		if c.pct(15) {
			u.TruncateAfter = hoststore.Ptr(c.around(b.start, b.end))
		}
		if c.pct(15) {
			u.DropBefore = hoststore.Ptr(c.around(b.start, b.end))
		}
		if c.pct(60) {
			rows(1 + c.rng.IntN(3))
		}
		ups = append(ups, u)
	}
	return ups
}

// learn updates a belief after a batch with u landed.
func (b *belief) learn(u hoststore.ScopeUpdate) {
	if u.Delete {
		*b = belief{}
		return
	}
	if u.Previous == nil {
		*b = belief{}
	}
	b.live, b.version = true, u.Next
	if t := u.TruncateAfter; t != nil && *t < b.end {
		b.end = *t
		b.start = min(b.start, b.end)
	}
	if d := u.DropBefore; d != nil && *d > b.start {
		b.start = min(*d, b.end)
	}
	b.end += hoststore.RowIndex(len(u.Append))
}

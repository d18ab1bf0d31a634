package explore

import (
	"bytes"
	"hash/maphash"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/obligation"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// The sequential specification the checker linearizes against is the
// reference Model plus the fence: the highest token issued and whether its
// holder's lease is live. Leases end only by lapse: a history runs in far
// less than one lease.
//
// A state is immutable once built; step returns a new one when an
// operation changes it. Because every accepted update moves its scope's
// version by one and must name the version before it, the set of batches
// applied fixes the Model: two states with the same token, lease and
// applied set are equal. That makes Equal and Hash cheap.
type state struct {
	m       *reference.Model
	token   hoststore.FenceToken
	live    bool
	applied []uint64 // bit i: batch i of the judge applied
	sum     uint64   // xor of the applied batches' hashes
}

func (s *state) has(i int) bool { return s.applied[i/64]&(1<<(i%64)) != 0 }

func (s *state) hash() uint64 {
	h := s.sum ^ uint64(s.token)*0x9e3779b97f4a7c15
	if s.live {
		h ^= 0x5bd1e995
	}
	return h
}

func (s *state) equal(o *state) bool {
	return s.token == o.token && s.live == o.live && s.sum == o.sum && slices.Equal(s.applied, o.applied)
}

// obsKind is what one linearizable operation of a history observes.
type obsKind uint8

const (
	obsEvent     obsKind = iota // the event itself
	obsListEntry                // a listing shows name with head
	obsListGone                 // a listing passes over name: not visible
)

// lop is one operation handed to porcupine: an event, or one observation
// of a listing event (a listing page need not be one snapshot, so each of
// its entries, and each name it passes over, is linearized on its own
// within the listing's interval).
type lop struct {
	ev   *Event
	kind obsKind
	name hoststore.ScopeName
	head *hoststore.VersionedHead
}

// batchInfo is one distinct commit id of a history.
type batchInfo struct {
	idx   int
	b     *Batch
	built *hoststore.CommitBatch
	hash  uint64
	sends []*Event // every commit event that carried it, in call order
}

// judge holds what the checker derives once from a history.
type judge struct {
	h       *History
	batches map[hoststore.CommitID]*batchInfo
	order   []*batchInfo
	names   map[hoststore.ScopeKind][]hoststore.ScopeName // every name a batch writes, sorted
	owners  map[string]hoststore.CommitID                 // row payload → the first batch appending it
	deletes map[hoststore.ScopeRef]bool                   // scopes some batch deletes
	ops     []lop
	words   int
	// relax, when set, is the obligation whose rule the model sets aside
	// (see name): only to name what a failed history breaks.
	relax reports.ObligationID
}

var hashSeed = maphash.MakeSeed()

// newJudge indexes h's batches and builds the operations to linearize. A
// batch NewCommitBatch refuses is left out, and so are its sends: the
// player never sends one, and a hand-built history with one is malformed.
func newJudge(h *History) *judge {
	j := &judge{h: h, batches: map[hoststore.CommitID]*batchInfo{}, names: map[hoststore.ScopeKind][]hoststore.ScopeName{},
		owners: map[string]hoststore.CommitID{}, deletes: map[hoststore.ScopeRef]bool{}}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Op != OpCommit || e.Batch == nil {
			continue
		}
		bi := j.batches[e.Batch.ID]
		if bi == nil {
			built, err := e.Batch.Build()
			if err != nil {
				continue
			}
			bi = &batchInfo{idx: len(j.order), b: e.Batch, built: built, hash: maphash.String(hashSeed, string(e.Batch.ID)) | 1}
			j.batches[e.Batch.ID] = bi
			j.order = append(j.order, bi)
			for _, u := range e.Batch.Updates {
				if !slices.Contains(j.names[u.Scope.Kind], u.Scope.Name) {
					j.names[u.Scope.Kind] = append(j.names[u.Scope.Kind], u.Scope.Name)
				}
				if u.Delete {
					j.deletes[u.Scope] = true
				}
				for _, r := range u.Append {
					if _, ok := j.owners[string(r)]; !ok {
						j.owners[string(r)] = e.Batch.ID
					}
				}
			}
		}
		bi.sends = append(bi.sends, e)
	}
	for _, ns := range j.names {
		slices.Sort(ns)
	}
	j.words = (len(j.order) + 63) / 64
	for i := range h.Events {
		j.addOps(&h.Events[i])
	}
	return j
}

// addOps adds what e contributes to the linearization.
func (j *judge) addOps(e *Event) {
	switch {
	case e.NotSent:
		return
	case e.Op == OpCommit:
		if e.Batch == nil || j.batches[e.Batch.ID] == nil {
			return
		}
		if !e.Unknown() && e.Err != hoststore.ErrKindOther && !allowed(e.Op, e.Err) {
			return // a direct finding; the batch was refused
		}
		// An answer outside the contract is a finding of its own; its
		// batch may still have landed, so it is judged as unknown.
		j.ops = append(j.ops, lop{ev: e})
	case e.Op == OpOpen || e.Op == OpKill || e.Op == OpClose:
		return
	case e.Lost || !e.Returned():
		// A read whose answer was lost observed nothing; an acquire, renew
		// or lapse whose answer was lost may have acted, which the fence
		// state cannot follow: the player does not lose them.
		return
	case e.Err != hoststore.ErrKindNone && !allowed(e.Op, e.Err):
		return // a direct finding; it observed nothing the model knows
	case e.Op == OpList:
		j.addListOps(e)
	default:
		j.ops = append(j.ops, lop{ev: e})
	}
}

// addListOps splits a listing page into its observations: each entry, and
// each name a batch of the history writes that the page passes over
// (above After, up to Next, or to the end when Next is nil).
func (j *judge) addListOps(e *Event) {
	if e.Err != hoststore.ErrKindNone || e.Page == nil {
		return
	}
	listed := map[hoststore.ScopeName]bool{}
	for _, nh := range e.Page.Heads {
		listed[nh.Name] = true
		j.ops = append(j.ops, lop{ev: e, kind: obsListEntry, name: nh.Name, head: hoststore.Ptr(nh.Head)})
	}
	for _, n := range j.names[e.Kind] {
		if listed[n] || e.After != nil && n <= *e.After || e.Page.Next != nil && n > *e.Page.Next {
			continue
		}
		j.ops = append(j.ops, lop{ev: e, kind: obsListGone, name: n})
	}
}

// allowed reports whether a store may answer op with an error of kind k
// (nil is always allowed). Context errors are not: the player ends no
// context while a history runs.
func allowed(op Op, k hoststore.ErrorKind) bool {
	switch k {
	case hoststore.ErrKindNone, hoststore.ErrKindUnavailable, hoststore.ErrKindInvalid:
		return true
	case hoststore.ErrKindHeld:
		return op == OpAcquire
	case hoststore.ErrKindFencedOut:
		return op == OpRenew || op == OpCommit
	case hoststore.ErrKindConflict, hoststore.ErrKindIndeterminate:
		return op == OpCommit
	}
	return false
}

func (j *judge) initial() *state {
	return &state{m: reference.NewModel(), applied: make([]uint64, j.words)}
}

// step returns whether op can take effect in s with the answer it got,
// and the state after it.
func (j *judge) step(s *state, op *lop) (bool, *state) {
	e := op.ev
	if op.kind != obsEvent && j.relax == obligation.ObListing {
		return true, s
	}
	switch op.kind {
	case obsListEntry:
		return sameHead(s.m.Head(hoststore.ScopeRef{Kind: e.Kind, Name: op.name}), op.head), s
	case obsListGone:
		return s.m.Head(hoststore.ScopeRef{Kind: e.Kind, Name: op.name}) == nil, s
	}
	if e.Err == hoststore.ErrKindUnavailable && !e.Unknown() {
		return true, s // nothing was applied, nothing observed
	}
	switch e.Op {
	case OpAcquire:
		return j.stepAcquire(s, e)
	case OpRenew:
		if j.relax == obligation.ObFenceLease {
			return true, s
		}
		return renewStep(s, e)
	case OpLapse:
		if e.Err != hoststore.ErrKindNone || !s.live {
			return true, s
		}
		n := *s
		n.live = false
		return true, &n
	case OpLoad:
		return e.Err == hoststore.ErrKindNone && e.Scope != nil && sameHead(s.m.Head(*e.Scope), e.Head), s
	case OpRead:
		if e.Scope == nil {
			return false, s
		}
		want, err := s.m.ReadRows(*e.Scope, e.From, e.Limit)
		if j.relax == obligation.ObOrder {
			return hoststore.KindOf(err) == e.Err && sameRowsAnyOrder(want, e.Rows), s
		}
		return hoststore.KindOf(err) == e.Err && sameRows(want, e.Rows), s
	case OpCommit:
		return j.stepCommit(s, e)
	}
	return false, s
}

func (j *judge) stepAcquire(s *state, e *Event) (bool, *state) {
	if j.relax == obligation.ObFenceLease {
		// Any answer goes; a grant still moves the token up.
		if e.Err == hoststore.ErrKindNone && e.Grant != nil && e.Grant.Token > s.token {
			n := *s
			n.token, n.live = e.Grant.Token, true
			return true, &n
		}
		return true, s
	}
	lease := j.h.Lease
	within := func(d int64) bool { return d > 0 && (lease == 0 || d <= int64(lease)) }
	switch e.Err {
	case hoststore.ErrKindNone:
		g := e.Grant
		if g == nil || g.Token <= s.token {
			return false, s
		}
		switch e.Mode {
		case hoststore.Exclusive.String():
			if s.live || g.SupersededLease != 0 {
				return false, s
			}
		case hoststore.Takeover.String():
			if s.live != within(int64(g.SupersededLease)) || !s.live && g.SupersededLease != 0 {
				return false, s
			}
		default:
			return false, s
		}
		n := *s
		n.token, n.live = g.Token, true
		return true, &n
	case hoststore.ErrKindHeld:
		h := e.Held
		return e.Mode == hoststore.Exclusive.String() && s.live && h != nil && h.Holder == s.token && within(int64(h.Remaining)), s
	}
	return false, s
}

func renewStep(s *state, e *Event) (bool, *state) {
	t := e.Token
	switch e.Err {
	case hoststore.ErrKindNone:
		if t == 0 || t != s.token {
			return false, s
		}
		if s.live {
			return true, s
		}
		n := *s
		n.live = true
		return true, &n
	case hoststore.ErrKindFencedOut:
		return t != 0 && t < s.token && (e.Fence == nil || e.Fence.Current == s.token), s
	}
	// Any refusal of a token never issued (0, or above the highest).
	return t == 0 || t > s.token, s
}

// stepCommit judges a commit. A commit whose outcome is unknown takes
// effect here if the model accepts it; if it did not land, it is
// linearized later, where it no longer applies, or last of all. An Ok for
// a batch the model refuses (stale token, version clash) is accepted as a
// store that meets obligations 4 and 5 at load: such a batch must then
// never show.
func (j *judge) stepCommit(s *state, e *Event) (bool, *state) {
	bi := j.batches[e.Batch.ID]
	landed := s.has(bi.idx)
	// Without fencing, a stale token lands as the current one would.
	current := bi.b.Token == s.token || j.relax == obligation.ObFencing && bi.b.Token != 0 && bi.b.Token < s.token
	if e.Unknown() || e.Err == hoststore.ErrKindOther || e.Err == hoststore.ErrKindNone {
		if landed || !current {
			return true, s
		}
		if s.m.Check(bi.built) != nil {
			return true, s
		}
		return true, j.apply(s, bi)
	}
	if landed {
		// A refusal of a batch that landed says nothing was applied again.
		switch e.Err {
		case hoststore.ErrKindConflict, hoststore.ErrKindInvalid, hoststore.ErrKindFencedOut:
			return true, s
		}
		return false, s
	}
	stale := bi.b.Token < s.token
	unissued := bi.b.Token == 0 || bi.b.Token > s.token
	switch e.Err {
	case hoststore.ErrKindFencedOut:
		return stale, s
	case hoststore.ErrKindConflict:
		conflict, _ := refusals(s.m, bi.b)
		return conflict, s
	case hoststore.ErrKindInvalid:
		_, deleted := refusals(s.m, bi.b)
		return unissued || deleted, s
	}
	return false, s
}

// refusals reports whether some update of b names a version its scope
// does not have in m (a Conflict), and whether some update creates a
// name m has deleted (an Invalid a store may answer). A store may check
// the updates in any order, so either answer fits when both apply.
func refusals(m *reference.Model, b *Batch) (conflict, deleted bool) {
	for _, u := range b.Updates {
		h := m.Head(u.Scope)
		switch {
		case u.Previous == nil && h != nil, u.Previous != nil && (h == nil || h.Version != *u.Previous):
			conflict = true
		case u.Previous == nil && m.Deleted(u.Scope):
			deleted = true
		}
	}
	return conflict, deleted
}

func (j *judge) apply(s *state, bi *batchInfo) *state {
	m := s.m.Clone()
	if err := m.Apply(bi.built); err != nil {
		panic("explore: the model refused a batch it had just checked: " + err.Error())
	}
	n := &state{m: m, token: s.token, live: s.live, applied: slices.Clone(s.applied), sum: s.sum ^ bi.hash}
	n.applied[bi.idx/64] |= 1 << (bi.idx % 64)
	return n
}

// porcupineModel wraps step for porcupine: inputs are *lop, outputs
// unused, states *state.
func (j *judge) porcupineModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return j.initial() },
		Step: func(st, in, _ any) (bool, any) {
			return j.step(st.(*state), in.(*lop))
		},
		Equal: func(a, b any) bool { return a.(*state).equal(b.(*state)) },
		Hash:  func(st any) uint64 { return st.(*state).hash() },
		DescribeOperation: func(in, _ any) string {
			return in.(*lop).ev.String()
		},
	}
}

// operations returns the judge's operations for porcupine. A commit whose
// outcome is unknown may take effect at any time after its call: its
// return is at infinity.
func (j *judge) operations() []porcupine.Operation {
	out := make([]porcupine.Operation, len(j.ops))
	for i := range j.ops {
		op := &j.ops[i]
		ret := op.ev.Return
		if op.ev.Unknown() || op.ev.Op == OpCommit && op.ev.Err == hoststore.ErrKindOther {
			ret = math.MaxInt64
		}

		out[i] = porcupine.Operation{ClientId: max(op.ev.Proc, 0), Input: op, Call: op.ev.Call, Return: ret}
	}
	return out
}

func sameHead(a, b *hoststore.VersionedHead) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Version == b.Version && a.CommitID == b.CommitID && bytes.Equal(a.Head, b.Head)
}

// sameRowsAnyOrder reports whether a and b hold the same indices and the
// same payloads, whichever payload sits at which index.
func sameRowsAnyOrder(a, b []hoststore.Row) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(rs []hoststore.Row) ([]hoststore.RowIndex, []string) {
		var is []hoststore.RowIndex
		var ds []string
		for _, r := range rs {
			is, ds = append(is, r.Index), append(ds, string(r.Data))
		}
		slices.Sort(is)
		slices.Sort(ds)
		return is, ds
	}
	ai, ad := key(a)
	bi, bd := key(b)
	return slices.Equal(ai, bi) && slices.Equal(ad, bd)
}

func sameRows(a, b []hoststore.Row) bool {
	return slices.EqualFunc(a, b, func(x, y hoststore.Row) bool { return x.Index == y.Index && bytes.Equal(x.Data, y.Data) })
}

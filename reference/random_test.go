package reference

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestModelMatchesStore applies seeded random sequences of batches (good
// ones, conflicting ones, deletes and creates of deleted names, retries,
// stale tokens, new processes) to a Store and a Model, and checks that the
// store returns what the model expects and shows what the model shows:
// every scope's head, rows, bounds and every listing page.
func TestModelMatchesStore(t *testing.T) {
	answers := map[hoststore.ErrorKind]int{}
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := newRandomRun(t, seed)
			defer func() {
				for k, n := range r.answers {
					answers[k] += n
				}
			}()
			for i := 0; i < 300; i++ {
				r.step(i)
				if i%50 == 49 {
					r.compareAll()
				}
			}
			r.compareAll()
			if r.landed < 120 {
				t.Fatalf("only %d of 300 steps landed a batch: the run tests too little", r.landed)
			}
		})
	}
	t.Logf("answers over every seed: %v", answers)
	for _, k := range []hoststore.ErrorKind{hoststore.ErrKindNone, hoststore.ErrKindConflict, hoststore.ErrKindInvalid, hoststore.ErrKindFencedOut} {
		if answers[k] < 10 {
			t.Errorf("the runs answered %q only %d times: too few to test it", k, answers[k])
		}
	}
}

// randomRun is one seeded run against a model and a store.
type randomRun struct {
	t       *testing.T
	rng     *rand.Rand
	m       *Model
	f       *Factory
	s       *Store
	tok     hoststore.FenceToken
	sent    []*hoststore.CommitBatch
	pool    []hoststore.ScopeRef
	landed  int
	batchNo int
	answers map[hoststore.ErrorKind]int
}

func newRandomRun(t *testing.T, seed uint64) *randomRun {
	r := &randomRun{t: t, rng: rand.New(rand.NewPCG(seed, 99)), m: NewModel(), f: NewFactory(), answers: map[hoststore.ErrorKind]int{}}
	for _, k := range []hoststore.ScopeKind{hoststore.KindSession, hoststore.KindRecord} {
		for _, n := range []string{"a", "ab", "abc", "b", "é", "é2", "日", "日本", "z", "Z", "a-long-name", "~"} {
			r.pool = append(r.pool, sc(k, n))
		}
	}
	r.s, r.tok = fenced(t, r.f)
	return r
}

// step takes one random action.
func (r *randomRun) step(i int) {
	switch p := r.rng.IntN(100); {
	case p < 8 && len(r.sent) > 0:
		r.commit(r.sent[r.rng.IntN(len(r.sent))], r.tok)
	case p < 12:
		r.s.Kill()
		r.s = openStore(r.t, r.f)
	case p < 16:
		old := r.tok
		g, err := r.s.AcquireFence(bg, hoststore.Takeover)
		if err != nil {
			r.t.Fatalf("step %d: takeover: %v", i, err)
		}
		r.tok = g.Token
		r.commit(r.newBatch(), old)
	case p < 30:
		r.compareReads()
	default:
		r.commit(r.newBatch(), r.tok)
	}
}

// commit sends b with the token it was built with and checks the answer
// against the model: a landed id returns nil, a stale token FencedOut,
// otherwise what Model.Check returns; an accepted batch is applied.
func (r *randomRun) commit(b *hoststore.CommitBatch, current hoststore.FenceToken) {
	want := r.m.Check(b)
	if !r.m.Landed(b.CommitID()) && b.Token() < current {
		want = &hoststore.FencedOutError{Current: current}
	}
	got := r.s.Commit(bg, b)
	r.answers[hoststore.KindOf(got)]++
	if hoststore.KindOf(got) != hoststore.KindOf(want) {
		r.t.Fatalf("Commit(%s) = %v, model expects %v", b, got, want)
	}
	var gc, wc *hoststore.ConflictError
	if errors.As(got, &gc) && errors.As(want, &wc) && (gc.Scope != wc.Scope || !reflect.DeepEqual(gc.Current, wc.Current)) {
		r.t.Fatalf("Commit(%s) = %v, model expects %v", b, got, want)
	}
	var fo *hoststore.FencedOutError
	if errors.As(got, &fo) && fo.Current != r.tok {
		r.t.Fatalf("FencedOut current = %d, want %d", fo.Current, r.tok)
	}
	if got == nil && !r.m.Landed(b.CommitID()) {
		mustApply(r.t, r.m, b)
		r.landed++
		r.t.Logf("landed %s", b)
	}
	r.sent = append(r.sent, b)
}

// newBatch builds a batch of one to three updates over distinct scopes of
// the pool, mostly well aimed at the model's current versions.
func (r *randomRun) newBatch() *hoststore.CommitBatch {
	r.batchNo++
	var ups []hoststore.ScopeUpdate
	want := 1 + r.rng.IntN(3)
	for _, at := range r.rng.Perm(len(r.pool)) {
		s := r.pool[at]
		if r.m.Deleted(s) && r.rng.IntN(10) != 0 {
			continue // mostly leave deleted names alone; sometimes recreate one (Invalid)
		}
		if ups = append(ups, r.update(s)); len(ups) == want {
			break
		}
	}
	if len(ups) == 0 {
		ups = append(ups, r.update(r.pool[r.rng.IntN(len(r.pool))]))
	}
	return batch(r.t, fmt.Sprintf("b%d", r.batchNo), r.tok, ups...)
}

func (r *randomRun) update(s hoststore.ScopeRef) hoststore.ScopeUpdate {
	h := r.m.Head(s)
	if h == nil {
		if r.rng.IntN(20) == 0 {
			return step(s, 1+hoststore.ScopeVersion(r.rng.IntN(3)), nil) // conflicts: absent
		}
		return create(s, fmt.Sprintf("h%d", r.batchNo), r.rows()...)
	}
	prev := h.Version
	switch r.rng.IntN(30) {
	case 0:
		return create(s, "again") // conflicts: exists
	case 1:
		prev += 1 + hoststore.ScopeVersion(r.rng.IntN(2)) // conflicts: wrong previous
	case 2:
		return del(s, prev)
	}
	start, end, _ := r.m.Bounds(s)
	return step(s, prev, func(u *hoststore.ScopeUpdate) {
		if r.rng.IntN(3) == 0 {
			u.TruncateAfter = hoststore.Ptr(r.index(start, end))
		}
		if r.rng.IntN(3) == 0 {
			u.DropBefore = hoststore.Ptr(r.index(start, end))
		}
		u.Append = rowsOf(r.rows()...)
		if r.rng.IntN(2) == 0 {
			u.Head = hoststore.Ptr([]byte(fmt.Sprintf("h%d", r.batchNo)))
		}
	})
}

// index picks a row index around [start, end], past both edges.
func (r *randomRun) index(start, end hoststore.RowIndex) hoststore.RowIndex {
	lo := max(int(start)-2, 0)
	return hoststore.RowIndex(lo + r.rng.IntN(int(end)+3-lo))
}

func (r *randomRun) rows() []string {
	out := make([]string, r.rng.IntN(4))
	for i := range out {
		out[i] = fmt.Sprintf("r%d.%d", r.batchNo, i)
	}
	return out
}

// compareReads compares one random ReadRows and one random listing page.
func (r *randomRun) compareReads() {
	s := r.pool[r.rng.IntN(len(r.pool))]
	start, end, _ := r.m.Bounds(s)
	from, limit := r.index(start, end), 1+r.rng.IntN(5)
	want, werr := r.m.ReadRows(s, from, limit)
	got, gerr := r.s.ReadRows(bg, s, from, limit)
	if hoststore.KindOf(gerr) != hoststore.KindOf(werr) || !reflect.DeepEqual(got, want) {
		r.t.Fatalf("ReadRows(%s, %d, %d) = %v, %v; model %v, %v", s, from, limit, rowStrings(got), gerr, rowStrings(want), werr)
	}
	var after *hoststore.ScopeName
	if p := r.pool[r.rng.IntN(len(r.pool))]; r.rng.IntN(2) == 0 {
		after = &p.Name
	}
	r.comparePage(s.Kind, after, 1+r.rng.IntN(4))
}

func (r *randomRun) comparePage(kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) hoststore.HeadPage {
	want, werr := r.m.ListHeads(kind, after, limit)
	got, gerr := r.s.ListHeads(bg, kind, after, limit)
	if gerr != nil || werr != nil || !reflect.DeepEqual(got, want) {
		r.t.Fatalf("ListHeads(%s, %v, %d) = %+v, %v; model %+v, %v", kind, after, limit, got, gerr, want, werr)
	}
	return got
}

// compareAll compares every scope of the pool and whole listings, from a
// fresh process.
func (r *randomRun) compareAll() {
	fresh := openStore(r.t, r.f)
	for _, s := range r.pool {
		if got, want := headOf(r.t, fresh, s), r.m.Head(s); !reflect.DeepEqual(got, want) {
			r.t.Fatalf("head of %s = %s, model %s", s, fmtHead(got), fmtHead(want))
		}
		start, end, ok := r.m.Bounds(s)
		got, err := fresh.ReadRows(bg, s, start, 1000)
		want, _ := r.m.ReadRows(s, start, 1000)
		if err != nil || !reflect.DeepEqual(got, want) {
			r.t.Fatalf("rows of %s = %v, %v; model %v", s, rowStrings(got), err, rowStrings(want))
		}
		if ok && len(want) != int(end-start) {
			r.t.Fatalf("model rows of %s: %d rows in [%d,%d)", s, len(want), start, end)
		}
		if ok && start > 0 {
			_, err := fresh.ReadRows(bg, s, start-1, 1)
			wantKind(r.t, fmt.Sprintf("ReadRows(%s) below the start", s), err, hoststore.ErrKindInvalid)
		}
	}
	for _, kind := range []hoststore.ScopeKind{hoststore.KindSession, hoststore.KindRecord} {
		var all []hoststore.ScopeName
		limit := 1 + r.rng.IntN(3)
		for page, after := r.comparePage(kind, nil, limit), (*hoststore.ScopeName)(nil); ; page = r.comparePage(kind, after, limit) {
			all = append(all, names(page)...)
			if page.Next == nil {
				break
			}
			after = page.Next
		}
		if want := r.m.Names(kind); !reflect.DeepEqual(all, want) {
			r.t.Fatalf("paged %s names = %q, model %q", kind, all, want)
		}
	}
}

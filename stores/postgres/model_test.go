package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// TestAgainstModel drives the store and the reference's pure model with the
// same random batches (creates, updates with every part, deletes, wrong
// previous versions, creates of deleted names, retries of landed batches)
// and compares every answer, head, row and listing after each batch. The
// seed is random and logged; CONFORM_MODEL_SEED runs one again.
func TestAgainstModel(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("CONFORM_MODEL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CONFORM_MODEL_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (set CONFORM_MODEL_SEED to run it again)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	f := newRealm(t)
	w, tok := writer(t, f)
	m := reference.NewModel()
	var refs []hoststore.ScopeRef
	for _, k := range []hoststore.ScopeKind{hoststore.KindSession, hoststore.KindRecord} {
		for _, n := range []string{"a", "b", "B", "é", "a b"} {
			refs = append(refs, scope(k, n))
		}
	}
	var sent []*hoststore.CommitBatch
	for i := range 150 {
		var b *hoststore.CommitBatch
		if len(sent) > 0 && rng.IntN(10) == 0 {
			b = sent[rng.IntN(len(sent))] // a retry, landed or not
		} else {
			b = randomBatch(t, rng, m, refs, hoststore.CommitID(fmt.Sprintf("m-%d", i)), tok)
			sent = append(sent, b)
		}
		want := m.Apply(b)
		got := w.Commit(t.Context(), b)
		if hoststore.KindOf(got) != hoststore.KindOf(want) || !sameConflict(got, want) {
			t.Fatalf("seed %d, batch %d %s: Commit = %v, model answers %v", seed, i, b, got, want)
		}
		for _, ref := range refs {
			compareScope(t, w, m, ref, rng)
		}
		for _, k := range []hoststore.ScopeKind{hoststore.KindSession, hoststore.KindRecord} {
			gp, gerr := w.ListHeads(t.Context(), k, nil, 3)
			wp, werr := m.ListHeads(k, nil, 3)
			if gerr != nil || werr != nil || !reflect.DeepEqual(pageText(gp), pageText(wp)) {
				t.Fatalf("seed %d, batch %d: ListHeads(%s) = %v, %v; model %v, %v", seed, i, k, pageText(gp), gerr, pageText(wp), werr)
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d: stopped after batch %d (%s)", seed, i, b)
		}
	}
}

func sameConflict(got, want error) bool {
	g, ok1 := got.(*hoststore.ConflictError)
	w, ok2 := want.(*hoststore.ConflictError)
	if !ok1 || !ok2 {
		return ok1 == ok2
	}
	return g.Scope == w.Scope && reflect.DeepEqual(g.Current, w.Current)
}

func compareScope(t *testing.T, s hoststore.HostStore, m *reference.Model, ref hoststore.ScopeRef, rng *rand.Rand) {
	t.Helper()
	got, err := s.LoadHead(t.Context(), ref)
	want := m.Head(ref)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("LoadHead(%s) = %+v, %v; model %+v", ref, got, err, want)
	}
	start, end, _ := m.Bounds(ref)
	for _, from := range []hoststore.RowIndex{start, start + hoststore.RowIndex(rng.IntN(3)), max(start, 1) - 1, end} {
		limit := 1 + rng.IntN(4)
		g, gerr := s.ReadRows(t.Context(), ref, from, limit)
		w, werr := m.ReadRows(ref, from, limit)
		if hoststore.KindOf(gerr) != hoststore.KindOf(werr) || fmt.Sprint(rowsText(g)) != fmt.Sprint(rowsText(w)) {
			t.Errorf("ReadRows(%s, %d, %d) = %v, %v; model %v, %v", ref, from, limit, rowsText(g), gerr, rowsText(w), werr)
		}
	}
}

func rowsText(rs []hoststore.Row) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%d:%s", r.Index, r.Data))
	}
	return out
}

func pageText(p hoststore.HeadPage) []string {
	out := []string{}
	for _, h := range p.Heads {
		out = append(out, fmt.Sprintf("%s@%d/%s=%s", h.Name, h.Head.Version, h.Head.CommitID, h.Head.Head))
	}
	if p.Next != nil {
		out = append(out, "next "+string(*p.Next))
	}
	return out
}

// randomBatch builds a batch of one to three updates over distinct scopes,
// mostly well aimed at the model's state, sometimes not.
func randomBatch(t *testing.T, rng *rand.Rand, m *reference.Model, refs []hoststore.ScopeRef, id hoststore.CommitID, tok hoststore.FenceToken) *hoststore.CommitBatch {
	t.Helper()
	perm := rng.Perm(len(refs))
	var ups []hoststore.ScopeUpdate
	for _, p := range perm[:1+rng.IntN(3)] {
		ref := refs[p]
		head := []byte(fmt.Sprintf("%s-h", id))
		var rows [][]byte
		for j := range rng.IntN(4) {
			rows = append(rows, []byte(fmt.Sprintf("%s-r%d", id, j)))
		}
		h := m.Head(ref)
		if h == nil || rng.IntN(12) == 0 { // a create (of a deleted name too), or a wrong one
			ups = append(ups, hoststore.ScopeUpdate{Scope: ref, Next: 1, Head: &head, Append: rows})
			continue
		}
		prev := h.Version
		if rng.IntN(12) == 0 {
			prev++ // a wrong previous
		}
		u := hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(prev), Next: prev + 1}
		if rng.IntN(10) == 0 {
			u.Delete = true
			ups = append(ups, u)
			continue
		}
		start, end, _ := m.Bounds(ref)
		if rng.IntN(3) == 0 {
			u.TruncateAfter = hoststore.Ptr(start + hoststore.RowIndex(rng.IntN(int(end-start)+3)))
			if rng.IntN(4) == 0 {
				u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(rng.IntN(int(start) + 1)))
			}
		}
		if rng.IntN(3) == 0 {
			u.DropBefore = hoststore.Ptr(hoststore.RowIndex(rng.IntN(int(end) + 3)))
		}
		if rng.IntN(2) == 0 {
			u.Head = &head
		}
		u.Append = rows
		ups = append(ups, u)
	}
	return batch(t, id, tok, ups...)
}

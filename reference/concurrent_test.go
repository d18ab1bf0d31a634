package reference

import (
	"fmt"
	"sync"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestReadersSeeBatchesWhole: while batches move a and b together, a
// reader that loads one scope and then the other never sees a batch in
// the first and not in the second, by load, by listing and by rows.
func TestReadersSeeBatchesWhole(t *testing.T) {
	f := NewFactory()
	s, tok := fenced(t, f)
	a, b := sess("a"), sess("b")
	mustCommit(t, s, batch(t, "c1", tok, create(a, "a"), create(b, "b")))
	done := make(chan struct{})
	var wg sync.WaitGroup
	fail := make(chan string, 3)
	read := func(first, second hoststore.ScopeRef) {
		defer wg.Done()
		r := openStore(t, f)
		for {
			select {
			case <-done:
				return
			default:
			}
			h1, _ := r.LoadHead(bg, first)
			h2, _ := r.LoadHead(bg, second)
			if h2.Version < h1.Version {
				fail <- fmt.Sprintf("loaded %s at v%d, then %s at v%d", first, h1.Version, second, h2.Version)
				return
			}
			page, _ := r.ListHeads(bg, hoststore.KindSession, nil, 2)
			if page.Heads[1].Head.Version < page.Heads[0].Head.Version {
				fail <- fmt.Sprintf("listed a at v%d, then b at v%d", page.Heads[0].Head.Version, page.Heads[1].Head.Version)
				return
			}
			r1, _ := r.ReadRows(bg, first, 0, 1000)
			r2, _ := r.ReadRows(bg, second, 0, 1000)
			if len(r2) < len(r1) {
				fail <- fmt.Sprintf("read %d rows of %s, then %d of %s", len(r1), first, len(r2), second)
				return
			}
		}
	}
	wg.Add(2)
	go read(a, b)
	go read(b, a)
	one := func(s hoststore.ScopeRef, v hoststore.ScopeVersion) hoststore.ScopeUpdate {
		return step(s, v, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("x") })
	}
	for v := hoststore.ScopeVersion(1); v <= 300; v++ {
		ups := []hoststore.ScopeUpdate{one(a, v), one(b, v)}
		if v%2 == 0 {
			ups[0], ups[1] = ups[1], ups[0]
		}
		mustCommit(t, s, batch(t, fmt.Sprint("p", v), tok, ups...))
	}
	close(done)
	wg.Wait()
	close(fail)
	for msg := range fail {
		t.Fatal(msg)
	}
}

// TestScopesCommitConcurrently: writers on their own scopes, each on its
// own handle, all land; and writers whose batches cross the same two
// scopes in opposite update orders never deadlock.
func TestScopesCommitConcurrently(t *testing.T) {
	f := NewFactory()
	_, tok := fenced(t, f)
	const writers, commits = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := openStore(t, f)
			me := sess(fmt.Sprint("own", w))
			if err := s.Commit(bg, batch(t, fmt.Sprint(me.Name, "-0"), tok, create(me, "h"))); err != nil {
				errs <- err
				return
			}
			for v := hoststore.ScopeVersion(1); v < commits; v++ {
				u := step(me, v, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r") })
				if err := s.Commit(bg, batch(t, fmt.Sprint(me.Name, "-", v), tok, u)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	x, y := sess("x"), sess("y")
	mustCommit(t, openStore(t, f), batch(t, "xy", tok, create(x, "x"), create(y, "y")))
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := openStore(t, f)
			for i := 0; i < 100; {
				hx, _ := s.LoadHead(bg, x)
				hy, _ := s.LoadHead(bg, y)
				ups := []hoststore.ScopeUpdate{step(x, hx.Version, nil), step(y, hy.Version, nil)}
				if w == 1 {
					ups[0], ups[1] = ups[1], ups[0]
				}
				switch err := s.Commit(bg, batch(t, fmt.Sprint("cross", w, "-", i), tok, ups...)); hoststore.KindOf(err) {
				case hoststore.ErrKindNone:
					i++
				case hoststore.ErrKindConflict:
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent commit: %v", err)
	}
	s := openStore(t, f)
	for w := 0; w < writers; w++ {
		me := sess(fmt.Sprint("own", w))
		if h := headOf(t, s, me); h.Version != commits {
			t.Fatalf("%s at v%d, want v%d", me, h.Version, commits)
		}
		if _, err := s.ReadRows(bg, me, commits-2, 10); err != nil {
			t.Fatal(err)
		}
	}
	if hx, hy := headOf(t, s, x), headOf(t, s, y); hx.Version != 201 || hy.Version != 201 || hx.CommitID != hy.CommitID {
		t.Fatalf("x at v%d by %q, y at v%d by %q; want both at v201 by one batch", hx.Version, hx.CommitID, hy.Version, hy.CommitID)
	}
}

// TestAcquireAgainstConcurrentCommits: writers commit with one token while
// another process takes the fence over. Every commit that answered nil
// stays visible, and every commit sent after the takeover answered is
// FencedOut and invisible.
func TestAcquireAgainstConcurrentCommits(t *testing.T) {
	f := NewFactory()
	_, tok := fenced(t, f)
	const writers = 4
	acquired := make(chan struct{})
	started := make(chan struct{}, writers)
	type result struct {
		scope  hoststore.ScopeRef
		landed hoststore.ScopeVersion
		err    error
	}
	results := make(chan result, writers)
	for w := 0; w < writers; w++ {
		go func() {
			s := openStore(t, f)
			me := sess(fmt.Sprint("w", w))
			landed := hoststore.ScopeVersion(0)
			for i := 0; ; i++ {
				after := false
				select {
				case <-acquired:
					after = true
				default:
				}
				u := create(me, "h")
				if landed > 0 {
					u = step(me, landed, nil)
				}
				err := s.Commit(bg, batch(t, fmt.Sprint(me.Name, "-", i), tok, u))
				switch {
				case err == nil && after:
					results <- result{me, landed, fmt.Errorf("a commit sent after the takeover answered nil")}
					return
				case err == nil:
					landed = u.Next
					if landed == 1 {
						started <- struct{}{}
					}
				case hoststore.KindOf(err) == hoststore.ErrKindFencedOut:
					if after {
						results <- result{me, landed, nil}
						return
					}
				default:
					results <- result{me, landed, err}
					return
				}
			}
		}()
	}
	for w := 0; w < writers; w++ {
		<-started
	}
	if _, err := openStore(t, f).AcquireFence(bg, hoststore.Takeover); err != nil {
		t.Fatal(err)
	}
	close(acquired)
	s := openStore(t, f)
	for w := 0; w < writers; w++ {
		r := <-results
		if r.err != nil {
			t.Fatalf("%s: %v", r.scope, r.err)
		}
		if h := headOf(t, s, r.scope); h == nil || h.Version != r.landed {
			t.Fatalf("%s shows %s, want v%d: the last commit answered nil", r.scope, fmtHead(h), r.landed)
		}
	}
}

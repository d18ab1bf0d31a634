package writer

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse commits from several goroutines while another moves
// the clock (firing renews and sweeps): run it with -race.
func TestConcurrentUse(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	r.opts.SweepEvery = 5 * time.Second
	w, _ := r.open(r.opts)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := session(fmt.Sprintf("g%d", g))
			for i := range 10 {
				rd := w.Round()
				if err := rd.Check(ctx, ToolCall); err != nil {
					errs <- err
					return
				}
				if err := rd.Commit(ctx, Update{Scope: s, Head: bigValue(1500*(i%3), byte(i)), Append: [][]byte{[]byte("r")}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 40 {
			r.clock.Advance(time.Second)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g := range 4 {
		rows, err := w.ReadRows(ctx, session(fmt.Sprintf("g%d", g)), 0, 100)
		if err != nil || len(rows) != 10 {
			t.Fatalf("g%d: %d rows, %v", g, len(rows), err)
		}
	}
	if err := w.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(r.chunkScopes()); got > 4 {
		t.Fatalf("%d chunk scopes for at most 4 chunked heads", got)
	}
}

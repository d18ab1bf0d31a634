package explore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	. "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/reference"
)

// synth builds a history from events, numbering them and setting Call
// and Return from their position where the test left them zero: event i
// runs over [2i+1, 2i+2].
func synth(evs ...Event) *History {
	h := &History{Procs: 2}
	for i, e := range evs {
		e.ID = i
		if e.Call == 0 {
			e.Call, e.Return = int64(2*i+1), int64(2*i+2)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

var (
	sa = hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}
	sb = hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "b"}
)

func create(id hoststore.CommitID, tok hoststore.FenceToken, s hoststore.ScopeRef) *Batch {
	return &Batch{ID: id, Token: tok, Updates: []hoststore.ScopeUpdate{{Scope: s, Next: 1}}}
}

func step(id hoststore.CommitID, tok hoststore.FenceToken, s hoststore.ScopeRef, prev hoststore.ScopeVersion) *Batch {
	return &Batch{ID: id, Token: tok, Updates: []hoststore.ScopeUpdate{{Scope: s, Previous: hoststore.Ptr(prev), Next: prev + 1}}}
}

func reached(c Coverage) []string {
	var out []string
	for _, it := range Items() {
		if c.Counts[it.ID] > 0 {
			out = append(out, it.ID)
		}
	}
	return out
}

func TestCoverageOfNothingReachesNothing(t *testing.T) {
	c := CoverageOf(nil)
	if got := len(c.Missing()); got != len(Items()) || c.Reached() != 0 {
		t.Fatalf("no history: %d missing, %d reached; want all %d missing", got, c.Reached(), len(Items()))
	}
	c = CoverageOf([]*History{synth(Event{Proc: 0, Op: OpOpen}, Event{Proc: 0, Op: OpKill})})
	if c.Reached() != 0 || c.Histories != 1 || c.Ops != 2 {
		t.Fatalf("open and kill only: %d reached, %d histories, %d ops; want 0, 1, 2", c.Reached(), c.Histories, c.Ops)
	}
}

func TestCoverageAnswers(t *testing.T) {
	h := synth(
		Event{Proc: 0, Op: OpAcquire, Mode: "Exclusive", Grant: &hoststore.FenceGrant{Token: 1}},
		Event{Proc: 1, Op: OpAcquire, Mode: "Exclusive", Err: hoststore.ErrKindHeld},
		Event{Proc: 0, Op: OpLoad, Scope: &sa},
		Event{Proc: 0, Op: OpRead, Scope: &sa, Err: hoststore.ErrKindInvalid},
		Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa)},
		Event{Proc: 0, Op: OpCommit, Batch: create("c2", 1, sa), Err: hoststore.ErrKindConflict},
	)
	c := CoverageOf([]*History{h})
	want := []string{"acquire/exclusive", "acquire/held", "load/absent", "read/invalid", "commit/ok", "commit/clash", "error/Held", "error/Invalid"}
	if got := reached(c); !slices.Equal(got, want) {
		t.Fatalf("reached %v, want %v", got, want)
	}
	if c.Counts["answer/commit/Conflict"] != 1 || c.Counts["answer/load/ok"] != 1 || c.Counts["error/Conflict"] != 1 {
		t.Errorf("answers by kind: %v", c.Counts)
	}
	for _, it := range c.Missing() {
		if it.ID == "commit/ok" || it.ID == "acquire/held" {
			t.Errorf("%s reached but listed as missing", it.ID)
		}
	}
}

// A store that keeps obligations 4 and 5 at load acknowledges both sides
// of a clash and a stale batch: each counts as the item all the same.
func TestCoverageClashAndStaleTokenAtLoad(t *testing.T) {
	h := synth(
		Event{Proc: 0, Op: OpCommit, Batch: step("c1", 1, sa, 3)},
		Event{Proc: 1, Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2}},
		Event{Proc: 0, Op: OpCommit, Batch: step("c2", 1, sa, 3)},
	)
	c := CoverageOf([]*History{h})
	if c.Counts["commit/clash"] != 1 || c.Counts["commit/stale-token"] != 1 {
		t.Fatalf("clash %d, stale token %d; want 1 and 1", c.Counts["commit/clash"], c.Counts["commit/stale-token"])
	}
	if c.Counts["error/Conflict"] != 0 || c.Counts["error/FencedOut"] != 0 {
		t.Errorf("no error was answered, yet: %v", c.Counts)
	}
	// The same batches one after the other, on different versions, with
	// the grant after the second commit: neither.
	h = synth(
		Event{Proc: 0, Op: OpCommit, Batch: step("c1", 1, sa, 3)},
		Event{Proc: 0, Op: OpCommit, Batch: step("c2", 1, sa, 4)},
		Event{Proc: 1, Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2}},
	)
	c = CoverageOf([]*History{h})
	if c.Counts["commit/clash"] != 0 || c.Counts["commit/stale-token"] != 0 {
		t.Fatalf("clash %d, stale token %d; want 0 and 0", c.Counts["commit/clash"], c.Counts["commit/stale-token"])
	}
}

func TestCoverageFaults(t *testing.T) {
	kill := func(site string) []Fault { return []Fault{{Layer: "wrapper", Site: site, Kind: "kill"}} }
	h := synth(
		Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa), Faults: kill("before-send"), NotSent: true},
		Event{Proc: 0, Op: OpCommit, Batch: create("c2", 1, sa), Faults: kill("in-flight"), Lost: true},
		Event{Proc: 0, Op: OpCommit, Batch: create("c3", 1, sa), Faults: kill("after-answer"), Lost: true},
		Event{Proc: 0, Op: OpCommit, Batch: create("c4", 1, sa), Faults: []Fault{{Layer: "wrapper", Site: "after-answer", Kind: "indeterminate"}}, Err: hoststore.ErrKindIndeterminate},
		Event{Proc: 0, Op: OpCommit, Batch: create("c5", 1, sa), Faults: []Fault{{Layer: "instore", Site: "commit-locked", Kind: "crash"}}, Lost: true},
		// A crash armed at a site the store never calls: the commit
		// answers, and the site is not reached.
		Event{Proc: 0, Op: OpCommit, Batch: create("c6", 1, sb), Faults: []Fault{{Layer: "instore", Site: "commit-after-point", Kind: "crash"}}},
		// A peek inside c5 that answered, and one inside c6 that failed.
		Event{Proc: 1, Op: OpLoad, Scope: &sa, Inside: "c5"},
		Event{Proc: 1, Op: OpLoad, Scope: &sb, Inside: "c6", Err: hoststore.ErrKindUnavailable},
	)
	c := CoverageOf([]*History{h})
	for _, id := range []string{"fault/kill-before-send", "fault/kill-in-flight", "fault/kill-answer-lost", "fault/indeterminate", "fault/crash-commit-locked", "peek/held"} {
		if c.Counts[id] != 1 {
			t.Errorf("%s: %d, want 1", id, c.Counts[id])
		}
	}
	var inStore []string
	for _, it := range c.Missing() {
		if it.InStore {
			inStore = append(inStore, it.ID)
		}
	}
	if want := []string{"fault/crash-commit-before-point", "fault/crash-commit-after-point"}; !slices.Equal(inStore, want) {
		t.Errorf("in-store items missing: %v, want %v", inStore, want)
	}
	if c.Counts["commit/ok"] != 0 {
		t.Errorf("an answer under an injected fault counted as the store's: commit/ok %d", c.Counts["commit/ok"])
	}
}

func TestCoverageRaces(t *testing.T) {
	// p0's commit is in flight over [1,10]; p1 commits to the same
	// version inside it, then acquires; p1's later commit to b overlaps
	// nothing.
	h := synth(
		Event{Proc: 0, Op: OpCommit, Batch: step("c1", 1, sa, 2), Call: 1, Return: 10},
		Event{Proc: 1, Op: OpCommit, Batch: step("c2", 1, sa, 2), Call: 2, Return: 3},
		Event{Proc: 1, Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2}, Call: 4, Return: 5},
		Event{Proc: 1, Op: OpCommit, Batch: create("c3", 2, sb), Call: 11, Return: 12},
	)
	c := CoverageOf([]*History{h})
	if c.Counts["race/same-scope"] != 1 || c.Counts["race/same-version"] != 1 || c.Counts["race/commit-acquire"] != 1 {
		t.Fatalf("races: same scope %d, same version %d, commit-acquire %d; want 1, 1, 1",
			c.Counts["race/same-scope"], c.Counts["race/same-version"], c.Counts["race/commit-acquire"])
	}
	// The same commits one after the other, or from one process: no race.
	h = synth(
		Event{Proc: 0, Op: OpCommit, Batch: step("c1", 1, sa, 2)},
		Event{Proc: 1, Op: OpCommit, Batch: step("c2", 1, sa, 2)},
		Event{Proc: 0, Op: OpCommit, Batch: step("c3", 1, sa, 3), Call: 20, Return: 30},
		Event{Proc: 0, Op: OpCommit, Batch: step("c4", 1, sa, 3), Call: 21, Return: 22},
	)
	c = CoverageOf([]*History{h})
	if c.Counts["race/same-scope"] != 0 || c.Counts["race/same-version"] != 0 {
		t.Fatalf("races counted where none ran: %v", c.Counts)
	}
}

func TestCoverageResendsByFateOfFirstSend(t *testing.T) {
	for _, c := range []struct {
		name  string
		first Event
		want  string
	}{
		{"landed", Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa)}, "resend/landed"},
		{"refused", Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa), Err: hoststore.ErrKindFencedOut}, "resend/refused"},
		{"lost", Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa), Lost: true}, "resend/unknown"},
		{"indeterminate", Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa), Err: hoststore.ErrKindIndeterminate}, "resend/unknown"},
		// Acknowledged after token 2 was granted: a store that keeps
		// fencing at load hides it, as good as refused.
		{"stale", Event{Proc: 0, Op: OpCommit, Batch: create("c1", 1, sa)}, "resend/refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A send that never left the process does not count as the first.
			notSent := Event{Proc: 1, Op: OpCommit, Batch: create("c1", 1, sa), NotSent: true}
			again := Event{Proc: 1, Op: OpCommit, Batch: create("c1", 1, sa)}
			grant := Event{Proc: 1, Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2}}
			if c.name != "stale" {
				grant.Grant.Token = 1
			}
			cov := CoverageOf([]*History{synth(grant, notSent, c.first, again)})
			var got []string
			for _, id := range []string{"resend/landed", "resend/refused", "resend/unknown"} {
				if cov.Counts[id] > 0 {
					got = append(got, id)
				}
			}
			if !slices.Equal(got, []string{c.want}) {
				t.Fatalf("reached %v, want [%s]", got, c.want)
			}
		})
	}
}

// TestReferenceReachesEveryItem plays the chapter's budget against the
// reference store: every item must be reached, or the item list asks for
// something the generator does not make.
func TestReferenceReachesEveryItem(t *testing.T) {
	var hs []*History
	for i := range 300 {
		h, err := Play(context.Background(), reference.NewFactory(), HistorySeed(41, i), Config{MaxOps: 200})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	c := CoverageOf(hs)
	if m := c.Missing(); len(m) > 0 {
		t.Fatalf("not reached: %v\n%s", m, c.Text())
	}
}

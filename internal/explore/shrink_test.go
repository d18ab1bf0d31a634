package explore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/canary"
)

// shrinkCanaries are the canaries the shrink tests take findings from;
// the first six are the issue's.
var shrinkCanaries = []canary.Bugs{
	canary.TornBatch, canary.LostOnKill, canary.IgnoreToken, canary.ReversedAppend, canary.RetryTwice, canary.LastWriterWins,
	canary.ApplyAsChecked, canary.LateTruncate, canary.DropRenumbers, canary.ReadBelowStartOK, canary.SkipLastListed,
	canary.ListedAfterDelete, canary.RenewNeverFenced, canary.ExclusiveIgnoresHolder, canary.NoRenewAfterLapse,
	// Not DirtyRead: a load must fall between a commit's early apply and
	// its commit point, which a replay does not hold the commit open for.
}

// findReproducible runs exploration against bug and returns a finding
// that Shrink reproduces, shrunk: Run's first finding from seed 3, or,
// when there is none or a replay does not reproduce it (a concurrent
// history need not interleave the same way twice), the first of a later
// seed.
func findReproducible(t testing.TB, bug canary.Bugs) (orig, shrunk HistoryFinding, st ShrinkStats, took time.Duration) {
	t.Helper()
	for seed := uint64(3); seed < 8; seed++ {
		res, err := Run(context.Background(), canaryRealm(bug), Config{Seed: seed, Histories: 1000, StopAtFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failed) == 0 {
			// Exploration finds some canaries by chance of interleaving.
			t.Logf("seed %d: not found in %d histories; next seed", seed, res.Histories)
			continue
		}
		orig = res.Failed[0]
		start := time.Now()
		shrunk, st, err = Shrink(context.Background(), canaryRealm(bug), orig, ShrinkConfig{})
		took = time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if st.Reproduced {
			return orig, shrunk, st, took
		}
		t.Logf("seed %d: the finding (%s, %d events) did not replay the same way; next seed", seed, orig.Findings[0].Obligation, len(orig.History.Events))
	}
	t.Fatalf("no finding of %s replayed", bug)
	return
}

// TestShrinkCanaries shrinks a finding of each canary and checks the
// result: at most 12 events, failing the finding's obligation; replayed
// twice it fails the same way with the same answers; replayed against the
// reference store it passes (the history is one a correct store answers
// correctly, not an artefact of the checker); and its repro line replays
// to the same failure.
func TestShrinkCanaries(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("long under -race -short")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-26s %6s %6s %-16s %7s %10s\n", "canary", "from", "to", "obligation", "replays", "time")
	for _, bug := range shrinkCanaries {
		t.Run(bug.String(), func(t *testing.T) {
			orig, g, st, took := findReproducible(t, bug)
			ob := orig.Findings[0].Obligation
			fmt.Fprintf(&table, "%-26s %6d %6d %-16s %7d %10s\n", bug, st.From, st.To, st.Obligation, st.Replays, took.Round(time.Microsecond))
			if st.From != len(orig.History.Events) || st.To != len(g.History.Events) || st.Obligation != ob {
				t.Errorf("stats %+v disagree with the finding (%d events, %s) and the result (%d events)", st, len(orig.History.Events), ob, len(g.History.Events))
			}
			if len(g.History.Events) > 12 {
				t.Errorf("shrunk to %d events, want at most 12:\n%s", len(g.History.Events), g.History.Text())
			}
			if len(g.Findings) == 0 || g.Findings[0].Obligation != ob {
				t.Fatalf("the shrunk history fails %v, want %s first", g.Findings, ob)
			}
			if v := Check(g.History, CheckConfig{}); len(v.Findings) == 0 || v.Findings[0].Obligation != ob {
				t.Fatalf("the shrunk history, checked again, fails %v, want %s", v.Findings, ob)
			}
			tw, err := ReplayTwice(context.Background(), canaryRealm(bug), g.History, Config{})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range tw.Verdicts {
				if len(v.Findings) == 0 || v.Findings[0].Obligation != ob {
					t.Fatalf("replay %d of the shrunk history fails %v, want %s\n%s", i+1, v.Findings, ob, tw.Runs[i].Text())
				}
			}
			if !tw.Same {
				t.Errorf("the shrunk history replays differently: %s", tw.Diff)
			}
			r, err := Replay(context.Background(), refRealm(t), g.History, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if v := Check(r, CheckConfig{}); !v.OK() {
				t.Errorf("the reference fails the shrunk history: %v\n%s", v.Findings, r.Text())
			}
			line, err := EncodeRepro(g.History)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeRepro(line)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Replay(context.Background(), canary.NewFactory(bug), back, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if v := Check(again, CheckConfig{}); len(v.Findings) == 0 || v.Findings[0].Obligation != ob {
				t.Errorf("the repro replays to %v, want %s", v.Findings, ob)
			}
			// The same finding shrinks to the same history.
			g2, st2, err := Shrink(context.Background(), canaryRealm(bug), orig, ShrinkConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := Script(g.History).Text(), Script(g2.History).Text(); a != b {
				t.Errorf("a second shrink of the finding differs (%d and %d replays):\n%s---\n%s", st.Replays, st2.Replays, a, b)
			}
			t.Logf("%s, %d bytes of repro:\n%s", g.Findings[0], len(line), g.History.Text())
		})
	}
	t.Logf("\n%s", table.String())
}

// TestShrinkKeepsBudget shrinks with a budget of a few replays: it stops
// there, with a history that still fails.
func TestShrinkKeepsBudget(t *testing.T) {
	res, err := Run(context.Background(), canaryRealm(canary.ReversedAppend), Config{Seed: 3, Histories: 1000, StopAtFirst: true})
	if err != nil || len(res.Failed) == 0 {
		t.Fatal("no finding", err)
	}
	f := res.Failed[0]
	g, st, err := Shrink(context.Background(), canaryRealm(canary.ReversedAppend), f, ShrinkConfig{Replays: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st.Replays > 5 || !st.Exhausted {
		t.Fatalf("ran %d replays on a budget of 5 (exhausted %v)", st.Replays, st.Exhausted)
	}
	if len(g.Findings) == 0 || g.Findings[0].Obligation != f.Findings[0].Obligation {
		t.Fatalf("the result fails %v, want %s", g.Findings, f.Findings[0].Obligation)
	}
}

// TestShrinkPassingHistory leaves a finding whose replay passes alone:
// nothing to shrink, and it says so.
func TestShrinkPassingHistory(t *testing.T) {
	b := writer()
	b.add(1, 10, 11, read(sa, 0, 5, "r1", "r0")) // recorded reversed; the reference will not
	f := HistoryFinding{Findings: Check(&b.h, CheckConfig{}).Findings, History: &b.h}
	if len(f.Findings) == 0 {
		t.Fatal("the synthetic history passes")
	}
	g, st, err := Shrink(context.Background(), referenceRealm, f, ShrinkConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reproduced || g.History != f.History || st.Replays == 0 {
		t.Fatalf("want the finding back unshrunk and not reproduced, got %+v", st)
	}
}

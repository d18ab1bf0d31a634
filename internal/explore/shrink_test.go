package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// shrinkCanaries are the canaries the shrink tests take findings from;
// the first six are the issue's.
var shrinkCanaries = []canary.Bugs{
	canary.TornBatch, canary.LostOnKill, canary.IgnoreToken, canary.ReversedAppend, canary.RetryTwice, canary.LastWriterWins,
	canary.ApplyAsChecked, canary.LateTruncate, canary.DropRenumbers, canary.ReadBelowStartOK, canary.SkipLastListed,
	canary.ListedAfterDelete, canary.RenewNeverFenced, canary.ExclusiveIgnoresHolder, canary.NoRenewAfterLapse,
	canary.ReadIgnoresLimit, canary.CreateOverExisting, canary.NextAfterFullPage, canary.DirtyRead, canary.SiteTwicePublish,
	canary.UnknownError, canary.UTF16Order, canary.PadSpace,
}

// findShrunk runs exploration against bug and returns a finding whose
// shrink is what a user is promised: of the findings of 300 histories
// from seed 3, the simplest (fewest processes, then fewest events) whose
// shrink does not fall short, trying four; or else one of a later seed.
// A shrink falls short when no replay fails the finding's obligation
// again, when it ends above 12 events, or when its result does not fail
// the same way twice: a concurrent history, or a kill in flight, need not
// play the same way twice, so a finding of such a history may not replay.
func findShrunk(t testing.TB, bug canary.Bugs) (orig, shrunk HistoryFinding, st ShrinkStats, twice Twice, took time.Duration, seeds, until int) {
	t.Helper()
	for seed := uint64(3); seed < 15; seed++ {
		seeds++
		res, err := Run(context.Background(), canaryRealm(bug), Config{Seed: seed, Histories: 300})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failed) == 0 {
			t.Logf("seed %d: not found in %d histories; next seed", seed, res.Histories)
			continue
		}
		until = res.Failed[0].Index + 1
		fs := slices.Clone(res.Failed)
		slices.SortStableFunc(fs, func(a, b HistoryFinding) int {
			if a.History.Procs != b.History.Procs {
				return a.History.Procs - b.History.Procs
			}
			return len(a.History.Events) - len(b.History.Events)
		})
		for _, f := range fs[:min(len(fs), 4)] {
			orig = f
			start := time.Now()
			shrunk, st, err = Shrink(context.Background(), canaryRealm(bug), orig, ShrinkConfig{})
			took = time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			ob := orig.Findings[0].Obligation
			if !st.Reproduced || len(shrunk.History.Events) > 12 {
				t.Logf("seed %d: history %d (%s, %d events, racy %v) shrank to %d events (reproduced %v)", seed, f.Index, ob, len(orig.History.Events), orig.History.Racy(), len(shrunk.History.Events), st.Reproduced)
				continue
			}
			twice, err = ReplayTwice(context.Background(), canaryRealm(bug), shrunk.History, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if failsTwice(twice, ob) {
				return orig, shrunk, st, twice, took, seeds, until
			}
			t.Logf("seed %d: history %d shrunk (racy %v) did not fail %s the same way twice: %v, %v", seed, f.Index, shrunk.History.Racy(), ob, twice.Verdicts[0].Findings, twice.Verdicts[1].Findings)
		}
	}
	t.Fatalf("no finding of %s in 12 seeds shrank to a history that fails the same way twice", bug)
	return
}

func failsTwice(tw Twice, ob reports.ObligationID) bool {
	for _, v := range tw.Verdicts {
		if len(v.Findings) == 0 || v.Findings[0].Obligation != ob {
			return false
		}
	}
	return tw.Same
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
	fmt.Fprintf(&table, "%-26s %5s %6s %6s %6s %-10s %7s %10s\n", "canary", "seeds", "until", "from", "to", "obligation", "replays", "time")
	for _, bug := range shrinkCanaries {
		t.Run(bug.String(), func(t *testing.T) {
			orig, g, st, _, took, seeds, until := findShrunk(t, bug)
			ob := orig.Findings[0].Obligation
			fmt.Fprintf(&table, "%-26s %5d %6d %6d %6d %-10s %7d %10s\n", bug, seeds, until, st.From, st.To, st.Obligation, st.Replays, took.Round(time.Microsecond))
			if st.From != len(orig.History.Events) || st.To != len(g.History.Events) || st.Obligation != ob {
				t.Errorf("stats %+v disagree with the finding (%d events, %s) and the result (%d events)", st, len(orig.History.Events), ob, len(g.History.Events))
			}
			if len(g.Findings) == 0 || g.Findings[0].Obligation != ob {
				t.Fatalf("the shrunk history fails %v, want %s first", g.Findings, ob)
			}
			if v := Check(g.History, CheckConfig{}); len(v.Findings) == 0 || v.Findings[0].Obligation != ob {
				t.Fatalf("the shrunk history, checked again, fails %v, want %s", v.Findings, ob)
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
			if v := Check(again, CheckConfig{}); !g.History.Racy() && (len(v.Findings) == 0 || v.Findings[0].Obligation != ob) {
				t.Errorf("the repro replays to %v, want %s", v.Findings, ob)
			}
			t.Logf("%s, %d bytes of repro:\n%s", g.Findings[0], len(line), g.History.Text())
		})
	}
	t.Logf("\n%s", table.String())
}

// TestShrinkSameFindingSameHistory shrinks one finding twice, for
// canaries whose findings include a history that is not racy: every
// candidate of such a history replays the same way each time, so the two
// shrinks end in the same history.
func TestShrinkSameFindingSameHistory(t *testing.T) {
	for _, bug := range []canary.Bugs{canary.ReversedAppend, canary.RetryTwice, canary.ReadBelowStartOK, canary.IgnoreToken, canary.LateTruncate} {
		t.Run(bug.String(), func(t *testing.T) {
			res, err := Run(context.Background(), canaryRealm(bug), Config{Seed: 3, Histories: 400})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res.Failed, func(f HistoryFinding) bool { return !f.History.Racy() })
			if i < 0 {
				t.Fatalf("none of %d findings in %d histories is of a history that is not racy", len(res.Failed), res.Histories)
			}
			f := res.Failed[i]
			a, sa, err := Shrink(context.Background(), canaryRealm(bug), f, ShrinkConfig{})
			if err != nil {
				t.Fatal(err)
			}
			b, sb, err := Shrink(context.Background(), canaryRealm(bug), f, ShrinkConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if !sa.Reproduced || sa.To >= sa.From {
				t.Fatalf("history %d (%d events) did not shrink: %+v", f.Index, len(f.History.Events), sa)
			}
			if x, y := Script(a.History).Text(), Script(b.History).Text(); x != y || sa != sb {
				t.Errorf("two shrinks of history %d differ (%+v and %+v):\n%s---\n%s", f.Index, sa, sb, x, y)
			}
		})
	}
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

// TestRenameKeepsPeeksInsideTheirCommits: after the shrinker renames
// commit ids, every peek still names the commit it was made inside of,
// under that commit's new id, so a shrunk peek replays as a peek.
func TestRenameKeepsPeeksInsideTheirCommits(t *testing.T) {
	for i := range 400 {
		h, err := Play(context.Background(), reference.NewFactory(), HistorySeed(43, i), Config{MaxOps: 200})
		if err != nil {
			t.Fatal(err)
		}
		var inside []int
		for k, e := range h.Events {
			if e.Inside != "" {
				inside = append(inside, k)
			}
		}
		if len(inside) == 0 {
			continue
		}
		c := renamed(h)
		for _, k := range inside {
			was, now := h.Events[k].Inside, c.Events[k].Inside
			var before, after []int
			for j, e := range h.Events {
				if e.Op == OpCommit && e.Batch.ID == was {
					before = append(before, j)
				}
			}
			for j, e := range c.Events {
				if e.Op == OpCommit && e.Batch.ID == now {
					after = append(after, j)
				}
			}
			if len(before) == 0 || !slices.Equal(before, after) {
				t.Fatalf("history %d, event %d: inside %q (the commits at %v), renamed inside %q (the commits at %v)", i, k, was, before, now, after)
			}
		}
		return
	}
	t.Fatal("no history of 400 made a peek")
}

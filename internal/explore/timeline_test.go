package explore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/timeline"
	"github.com/conform-spi/conform/reports"
)

// TestTimelinePictures writes a report with timelines of real failing
// histories into $CONFORM_TIMELINE_DIR, to look at; skipped without it.
func TestTimelinePictures(t *testing.T) {
	dir := os.Getenv("CONFORM_TIMELINE_DIR")
	if dir == "" {
		t.Skip("set CONFORM_TIMELINE_DIR to write the pictures")
	}
	find := func(bug canary.Bugs, maxOps, lo, hi int) (HistoryFinding, bool) {
		res, err := Run(context.Background(), canaryRealm(bug), Config{Seed: 11, Histories: 1500, MaxOps: maxOps})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Failed {
			ops := 0
			for _, e := range f.History.Events {
				if e.Op != OpOpen && e.Op != OpKill && e.Op != OpClose {
					ops++
				}
			}
			if ops >= lo && ops <= hi {
				return f, true
			}
		}
		return HistoryFinding{}, false
	}
	var rows []reports.Row
	for i, c := range []struct {
		bug            canary.Bugs
		maxOps, lo, hi int
	}{{canary.IgnoreToken, 20, 10, 14}, {canary.LostOnKill, 200, 140, 160}, {canary.TornBatch, 20, 8, 14}} {
		f, ok := find(c.bug, c.maxOps, c.lo, c.hi)
		if !ok {
			t.Logf("no history of %d to %d events for bug %d", c.lo, c.hi, c.bug)
			continue
		}
		fd := f.Findings[0]
		rows = append(rows, reports.Row{Chapter: "explore", ID: reports.RowID(fmt.Sprintf("history-%d", i)), Name: fmt.Sprintf("History %d (%d events)", f.Index, len(f.History.Events)),
			Status: reports.StatusFailed, Obligations: []reports.ObligationID{fd.Obligation}, Duration: time.Second,
			Failures: []reports.Failure{{Message: fd.Message, Obligation: fd.Obligation, Expected: fd.Want, Got: fd.Got, Timeline: TimelineOf(f.History, fd.Event)}}})
	}
	run := &reports.Run{Tool: "conform", Version: "dev", Store: "canary", Seed: 11, Rows: rows}
	if err := reports.WriteAll(dir, run); err != nil {
		t.Fatal(err)
	}
}

func TestTimelineOf(t *testing.T) {
	b := writer() // p0: #0 acquire [1,2], #1 commit c0 [3,4]
	b.add(1, 5, 6, Event{Op: OpOpen}).
		add(1, 7, 0, lost(commit("c1", 1, update(sa, 1, "a1")))).
		add(0, 8, 9, answer(Event{Op: OpRenew, Token: 1, Fence: &hoststore.FencedOutError{Current: 2}}, hoststore.ErrKindFencedOut)).
		add(1, 10, 11, Event{Op: OpKill}).
		add(0, 12, 13, load(sa, 1, "c0", "a0")).
		add(0, 14, 15, read(sb, 0, 5))
	b.h.Events[3].Faults = []Fault{{Layer: "wrapper", Site: "in-flight", Kind: "kill"}}
	notSent := commit("c2", 1, update(sb, 1, "b1"))
	notSent.NotSent, notSent.Faults = true, []Fault{{Layer: "wrapper", Site: "before-send", Kind: "kill"}}
	b.add(2, 16, 17, notSent)
	b.add(2, 18, 0, Event{Op: OpList, Kind: hoststore.KindSession, Limit: 2})
	b.h.Procs = 4 // p3 ran nothing
	tl := TimelineOf(&b.h, 7)

	if got := fmt.Sprint(tl.Lanes); got != "[p0 p1 p2 p3]" {
		t.Errorf("lanes = %s, want one per process", got)
	}
	if tl.Highlight != 7 || len(tl.Events) != len(b.h.Events) {
		t.Fatalf("highlight %d, %d events; want 7 and %d", tl.Highlight, len(tl.Events), len(b.h.Events))
	}
	want := []struct {
		lane                        int
		mark, label, answer, result string
	}{
		{0, "", "acquire Exclusive", "ok", "tok=1"},
		{0, "", "commit c0 tok=1 Session/a Session/b", "ok", ""},
		{1, "open", "open", "ok", ""},
		{1, "", "commit c1 tok=1 Session/a", "lost", ""},
		{0, "", "renew tok=1", "FencedOut", "current=2"},
		{1, "kill", "kill", "ok", ""},
		{0, "", "load Session/a", "ok", "v1 c0"},
		{0, "", "read Session/b from=0 limit=5", "ok", "no rows"},
		{2, "", "commit c2 tok=1 Session/b", "not sent", ""},
		{2, "", "list Session after=nil limit=2", "", ""},
	}
	for i, w := range want {
		e, h := tl.Events[i], b.h.Events[i]
		got := []any{e.Lane, e.Mark, e.Label, e.Answer, e.Result}
		if fmt.Sprint(got) != fmt.Sprint([]any{w.lane, w.mark, w.label, w.answer, w.result}) {
			t.Errorf("event %d = %q, want %q", i, got, []any{w.lane, w.mark, w.label, w.answer, w.result})
		}
		if e.ID != h.ID || e.Call != h.Call || e.Return != h.Return || e.Detail != h.String() {
			t.Errorf("event %d: id %d, clock %d–%d, detail %q; want the history's", i, e.ID, e.Call, e.Return, e.Detail)
		}
	}
	if f := tl.Events[3].Faults; len(f) != 1 || f[0] != (timeline.Fault{Layer: "wrapper", Site: "in-flight", Kind: "kill"}) {
		t.Errorf("faults of #3 = %+v", f)
	}
	if f := tl.Events[8].Faults; len(f) != 1 || f[0].When != timeline.FaultBefore {
		t.Errorf("faults of #8 = %+v, want one before the send", f)
	}
	if TimelineOf(nil, 0) != nil {
		t.Error("TimelineOf(nil) is not nil")
	}
}

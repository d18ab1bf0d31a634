package explore

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
)

// sameCall reports whether two events ask the same of a store: the same
// process, operation, arguments (tokens aside) and faults.
func sameCall(a, b *Event) bool {
	if a.Proc != b.Proc || a.Op != b.Op || a.Mode != b.Mode || a.Kind != b.Kind || a.From != b.From || a.Limit != b.Limit ||
		!reflect.DeepEqual(a.Faults, b.Faults) || !reflect.DeepEqual(a.Scope, b.Scope) || !reflect.DeepEqual(a.After, b.After) {
		return false
	}
	if (a.Batch == nil) != (b.Batch == nil) {
		return false
	}
	return a.Batch == nil || a.Batch.ID == b.Batch.ID && reflect.DeepEqual(a.Batch.Updates, b.Batch.Updates)
}

// outcome classes a commit's answer as the faults shape it.
func outcome(e *Event) string {
	switch {
	case e.NotSent:
		return "not sent"
	case e.Lost:
		return "lost"
	case e.Err == hoststore.ErrKindIndeterminate:
		return "indeterminate"
	}
	return "answered"
}

// TestReplayKeepsCallsOrderAndFaults replays recorded reference histories
// (concurrent, with faults) and checks what the replay promises: every
// event played once by its process with its arguments, in the recorded
// call order, every recorded real-time precedence kept, every injected
// fault acting as it did, and the replay judged linearizable.
func TestReplayKeepsCallsOrderAndFaults(t *testing.T) {
	n := 150
	if testing.Short() || raceEnabled {
		n = 40
	}
	faulted, overlapping := 0, 0
	for i := range n {
		h, err := Play(context.Background(), refRealm(t), HistorySeed(11, i), Config{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(context.Background(), refRealm(t), h, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if v := Check(r, CheckConfig{}); !v.OK() {
			t.Fatalf("history %d: the replay against the reference fails: %v\n%s", i, v.Findings, r.Text())
		}
		if len(r.Events) != len(h.Events) || r.Procs != h.Procs {
			t.Fatalf("history %d: replayed %d events of %d procs, recorded %d of %d", i, len(r.Events), r.Procs, len(h.Events), h.Procs)
		}
		for k := range h.Events {
			a, b := &h.Events[k], &r.Events[k]
			if !sameCall(a, b) {
				t.Fatalf("history %d: event %d was\n  %s\nreplayed as\n  %s", i, k, a, b)
			}
			// A wrapper fault acts whatever the store does; an in-store one
			// only if the commit gets as far as its site, which depends on
			// what ran before it.
			if len(a.Faults) > 0 && a.Faults[0].Layer == "wrapper" {
				faulted++
				if outcome(a) != outcome(b) {
					t.Fatalf("history %d: event %d's fault made it %s, in the replay %s\n  %s\n  %s", i, k, outcome(a), outcome(b), a, b)
				}
			}
			if k > 0 && r.Events[k-1].Call >= b.Call {
				t.Fatalf("history %d: event %d was called before event %d in the replay", i, k, k-1)
			}
			for j := range k {
				x := &h.Events[j]
				if x.Returned() && x.Return < a.Call && !(r.Events[j].Returned() && r.Events[j].Return < b.Call) {
					t.Fatalf("history %d: #%d returned before #%d was called, not in the replay:\n%s", i, j, k, r.Text())
				}
				if !x.Returned() || x.Return > a.Call {
					overlapping++
				}
			}
		}
	}
	if faulted == 0 || overlapping == 0 {
		t.Fatalf("the histories had %d faulted commits and %d overlapping pairs: the test tests nothing", faulted, overlapping)
	}
	t.Logf("%d histories, %d faulted commits, %d overlapping pairs", n, faulted, overlapping)
}

func refRealm(t testing.TB) hoststore.HostStoreFactory {
	t.Helper()
	f, err := referenceRealm()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplayMapsTokens replays a hand-written script whose tokens are not
// the ones a fresh store issues: the batch and the renew carry the token
// the replay's acquire got, and a resend by another process carries the
// token its first send carried.
func TestReplayMapsTokens(t *testing.T) {
	b := &hist{}
	b.add(0, 1, 2, Event{Op: OpOpen}).
		add(0, 3, 4, acq("Exclusive", 70)).
		add(0, 5, 6, commit("c1", 70, create(sa, "a1", "r0"))).
		add(0, 7, 8, Event{Op: OpRenew, Token: 70}).
		add(1, 9, 10, Event{Op: OpOpen}).
		add(1, 11, 12, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 90}}).
		add(1, 13, 14, commit("c2", 90, update(sa, 1, "a2"))).
		add(1, 15, 16, commit("c1", 70, create(sa, "a1", "r0"))).
		add(0, 17, 18, Event{Op: OpRenew, Token: 70}).
		add(1, 19, 20, Event{Op: OpRenew, Token: 5}). // granted by no acquire: the handle's own
		add(2, 19, 20, Event{Op: OpOpen}).
		add(2, 21, 22, Event{Op: OpRenew, Token: 6}). // and a handle without one sends it as it is
		add(1, 23, 24, load(sa, 0, "", ""))
	r, err := Replay(context.Background(), refRealm(t), &b.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tok hoststore.FenceToken
		err hoststore.ErrorKind
	}{2: {1, ""}, 3: {1, ""}, 6: {2, ""}, 7: {1, hoststore.ErrKindNone}, 8: {1, hoststore.ErrKindFencedOut}, 9: {2, hoststore.ErrKindNone}, 11: {6, hoststore.ErrKindInvalid}}
	for i, w := range want {
		if w.tok == 0 {
			continue
		}
		e := &r.Events[i]
		got := e.Token
		if e.Batch != nil {
			got = e.Batch.Token
		}
		if got != w.tok || e.Err != w.err {
			t.Errorf("#%d: sent token %d and got %q, want token %d and %q: %s", i, got, e.Err, w.tok, w.err, e)
		}
	}
	if e := r.Events[12]; e.Head == nil || e.Head.CommitID != "c2" || e.Head.Version != 2 {
		t.Errorf("the load shows %s, want c2 at version 2 under its recorded id", HeadText(e.Head))
	}
	if v := Check(r, CheckConfig{}); !v.OK() {
		t.Errorf("the replay fails: %v\n%s", v.Findings, r.Text())
	}
}

// TestReplayWithoutHandle records the operations of a process whose open
// was dropped as not sent, and plays the rest.
func TestReplayWithoutHandle(t *testing.T) {
	b := &hist{}
	b.add(0, 1, 2, acq("Exclusive", 1)).
		add(1, 3, 4, Event{Op: OpOpen}).
		add(1, 5, 6, Event{Op: OpAcquire, Mode: "Exclusive", Grant: &hoststore.FenceGrant{Token: 1}})
	r, err := Replay(context.Background(), refRealm(t), &b.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Events[0].NotSent || r.Events[2].Grant == nil || r.Events[2].Grant.Token != 1 {
		t.Fatalf("want the handleless acquire not sent and the other granted token 1:\n%s", r.Text())
	}
}

func TestReplayRefusesMalformedScript(t *testing.T) {
	b := &hist{}
	b.add(0, 1, 2, Event{Op: OpOpen}).add(0, 3, 4, commit("c1", 1))
	if _, err := Replay(context.Background(), refRealm(t), &b.h, Config{}); err == nil {
		t.Fatal("want a batch without updates refused")
	}
}

// TestReproRoundTrip encodes recorded histories and reads them back: the
// script survives whole, and the line needs no escaping in a repro string.
func TestReproRoundTrip(t *testing.T) {
	for i := range 20 {
		h, err := Play(context.Background(), refRealm(t), HistorySeed(12, i), Config{MaxOps: 60})
		if err != nil {
			t.Fatal(err)
		}
		line, err := EncodeRepro(h)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(line, " ;%+=&\n\t") {
			t.Fatalf("the repro holds a character a repro string escapes: %q", line)
		}
		if u, err := url.QueryUnescape(line); err != nil || u != line {
			t.Fatalf("the repro does not survive unescaping: %q, %v", u, err)
		}
		back, err := DecodeRepro(line)
		if err != nil {
			t.Fatal(err)
		}
		if want := Script(h); !reflect.DeepEqual(want, back) {
			t.Fatalf("round trip changed the script:\n%s\n---\n%s", want.Text(), back.Text())
		}
	}
	for _, bad := range []string{"", "h1.", "h1.!!", "h2.AAAA", "h1." + strings.Repeat("A", 10)} {
		if _, err := DecodeRepro(bad); err == nil {
			t.Errorf("DecodeRepro(%q): want an error", bad)
		}
	}
}

// TestReplayTwiceSaysWhenTheStoreDiffers replays one history on a store
// that reverses appends only the second time it is made: ReplayTwice
// must say the runs differ, and must say nothing for a store that
// behaves the same.
func TestReplayTwiceSaysWhenTheStoreDiffers(t *testing.T) {
	b := &hist{}
	b.add(0, 1, 2, Event{Op: OpOpen}).
		add(0, 3, 4, acq("Exclusive", 1)).
		add(0, 5, 6, commit("c1", 1, create(sa, "a1", "r0", "r1"))).
		add(0, 7, 8, read(sa, 0, 5))
	made := 0
	flaky := func() (hoststore.HostStoreFactory, error) {
		made++
		if made == 2 {
			return canary.NewFactory(canary.ReversedAppend), nil
		}
		return canary.NewFactory(0), nil
	}
	tw, err := ReplayTwice(context.Background(), flaky, &b.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tw.Same || !strings.Contains(tw.Diff, "judgement") || tw.Verdicts[0].OK() == tw.Verdicts[1].OK() {
		t.Fatalf("want the runs told apart by their judgement, got same=%v diff=%q", tw.Same, tw.Diff)
	}
	// The same judgement, other answers: a store without in-store sites
	// lets through the commit the other crashes, and both pass.
	c := &hist{}
	crash := commit("c1", 1, create(sa, "a1"))
	crash.Faults = []Fault{{Layer: "instore", Site: "commit-before-point", Kind: "crash"}}
	c.add(0, 1, 2, Event{Op: OpOpen}).add(0, 3, 4, acq("Exclusive", 1)).add(0, 5, 6, crash).add(1, 7, 8, Event{Op: OpOpen}).add(1, 9, 10, load(sa, 0, "", ""))
	made = 0
	sites := func() (hoststore.HostStoreFactory, error) {
		made++
		if made == 2 {
			return canary.NewFactory(canary.NoSites), nil
		}
		return canary.NewFactory(0), nil
	}
	tw, err = ReplayTwice(context.Background(), sites, &c.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tw.Same || !strings.HasPrefix(tw.Diff, "#2 commit: first lost, then ok") || !tw.Verdicts[0].OK() || !tw.Verdicts[1].OK() {
		t.Fatalf("want the runs told apart by the crashed commit's answer, got same=%v diff=%q", tw.Same, tw.Diff)
	}
	tw, err = ReplayTwice(context.Background(), canaryRealm(0), &c.h, Config{})
	if err != nil || !tw.Same || tw.Runs[0].Events[2].Lost != true {
		t.Fatalf("want the crash replayed alike twice, got %v same=%v %q", err, tw.Same, tw.Diff)
	}
	tw, err = ReplayTwice(context.Background(), canaryRealm(canary.ReversedAppend), &b.h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !tw.Same || tw.Verdicts[0].OK() {
		t.Fatalf("want the same failure twice, got same=%v %q, %v", tw.Same, tw.Diff, tw.Verdicts[0].Findings)
	}
}

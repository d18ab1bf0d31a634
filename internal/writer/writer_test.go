package writer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

func TestOpenAcquiresLoadsAndCommits(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	if w.Token() != 1 {
		t.Fatalf("token %d on an empty realm, want 1", w.Token())
	}
	if got := h.count("list "); got != len(hoststore.AllKinds) {
		t.Fatalf("the bulk load listed %d times, want once per kind (%d)", got, len(hoststore.AllKinds))
	}
	s := session("s")
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v1"), Append: [][]byte{[]byte("r0")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v2"), Append: [][]byte{[]byte("r1")}}); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := w.Value(ctx, s); err != nil || !ok || string(v) != "v2" {
		t.Fatalf("Value = %q, %v, %v", v, ok, err)
	}
	if got := w.Names(hoststore.KindSession); len(got) != 1 || got[0] != s.Name {
		t.Fatalf("Names = %v", got)
	}
	w.Close()
	r.lapse()
	w2, _ := r.open(r.opts)
	hd, ok := w2.Head(s)
	if !ok || hd.Version != 2 {
		t.Fatalf("a new writer loads %v, %v; want version 2", hd, ok)
	}
	rows, err := w2.ReadRows(ctx, s, 0, 10)
	if err != nil || len(rows) != 2 || string(rows[1].Data) != "r1" {
		t.Fatalf("ReadRows = %v, %v", rows, err)
	}
	if w2.Token() <= w.Token() {
		t.Fatalf("the new writer's token %d is not above %d", w2.Token(), w.Token())
	}
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Commit after Close = %v, want ErrClosed", err)
	}
}

func TestOpenAnswersHeldAndTakesOverOnlyWhenAsked(t *testing.T) {
	r := newRealm(t)
	old, _ := r.open(r.opts)
	h := r.handle()
	_, err := Open(ctx, h, r.opts)
	var held *hoststore.HeldError
	if !errors.As(err, &held) || held.Holder != old.Token() {
		t.Fatalf("Open over a live holder = %v, want its *HeldError", err)
	}
	if n := h.count("acquire Takeover"); n != 0 {
		t.Fatalf("Open took over %d times without being asked", n)
	}
	opts := r.opts
	opts.Takeover = true
	nw, _ := r.open(opts)
	start := r.clock.Now()
	if err := nw.Round().Check(ctx, ModelCall); err != nil {
		t.Fatal(err)
	}
	if waited := r.clock.Since(start); waited != timing().Lease() {
		t.Fatalf("the new holder waited %s before its model call, want the superseded lease %s", waited, timing().Lease())
	}
	// The old holder's window closed during that wait, and its renew was refused.
	if err := old.Round().Check(ctx, ToolCall); !errors.Is(err, ErrStopped) && !errors.Is(err, ErrSelfFenced) {
		t.Fatalf("the superseded holder's check = %v, want a refusal", err)
	}
	if err := old.Commit(ctx, Update{Scope: session("x"), Head: []byte("x")}); !errors.Is(err, ErrStopped) {
		t.Fatalf("the superseded holder's commit = %v, want ErrStopped", err)
	}
}

func TestRenewerKeepsTheWindowOpen(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	for range 20 {
		r.clock.Advance(7 * time.Second)
		if err := w.Round().Check(ctx, ToolCall); err != nil {
			t.Fatalf("check after %s: %v", r.clock.Since(ManualEpoch), err)
		}
	}
	want := int(140 * time.Second / timing().RenewInterval())
	if got := h.count("renew "); got != want {
		t.Fatalf("renewed %d times in 140 s, want once per renew interval (%d)", got, want)
	}
	if h.count("renew") != h.count("renew 1 = <nil>") {
		t.Fatal("a renew failed")
	}
}

func TestChecksTakeNoStoreRequest(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	before := len(h.calls)
	rd := w.Round()
	for range 100 {
		if err := rd.Check(ctx, ModelCall); err != nil {
			t.Fatal(err)
		}
		if err := rd.Check(ctx, ToolCall); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.calls) != before {
		t.Fatalf("checks sent %d store requests: %v", len(h.calls)-before, h.calls[before:])
	}
}

func TestFailedRenewFencesUntilAFreshAcquire(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	s := session("s")
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	inj := h.Inject(faultRenewUnavailable())
	r.clock.Advance(timing().RenewInterval())
	<-inj.Fired()
	rd := w.Round()
	if err := rd.Check(ctx, ToolCall); !errors.Is(err, ErrSelfFenced) {
		t.Fatalf("check after a failed renew = %v, want ErrSelfFenced", err)
	}
	if err := rd.Commit(ctx, Update{Scope: s, Head: []byte("v2")}); !errors.Is(err, ErrRoundRefused) {
		t.Fatalf("the refused round's commit = %v, want ErrRoundRefused", err)
	}
	r.clock.Advance(timing().RenewInterval())
	if err := w.Round().Check(ctx, ModelCall); !errors.Is(err, ErrSelfFenced) {
		t.Fatalf("a later check = %v: the writer resumed without a fresh acquire", err)
	}
	old := w.Token()
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v2")}); err != nil {
		t.Fatalf("the next write (which makes the fresh acquire) = %v", err)
	}
	if w.Token() <= old {
		t.Fatalf("token %d after the fresh acquire, want above %d", w.Token(), old)
	}
	if h.count("acquire Exclusive") != 2 || h.count("acquire Takeover") != 1 {
		t.Fatalf("want Open's exclusive acquire, then an exclusive that answered Held and a takeover of its own lease: %v", h.calls)
	}
	start := r.clock.Now()
	if err := w.Round().Check(ctx, ModelCall); err != nil {
		t.Fatal(err)
	}
	if r.clock.Since(start) != timing().Lease() {
		t.Fatalf("after taking over its own live lease the writer waited %s, want %s", r.clock.Since(start), timing().Lease())
	}
	if v := r.mustValue(s); string(v) != "v2" {
		t.Fatalf("value %q", v)
	}
}

func TestPauseClosesTheWindow(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	r.clock.Pause(timing().SelfFenceWindow())
	if h.count("renew") != 0 {
		t.Fatalf("the renewer renewed after the window closed: %v", h.calls)
	}
	if err := w.Round().Check(ctx, ToolCall); !errors.Is(err, ErrSelfFenced) {
		t.Fatalf("check after a pause past the window = %v, want ErrSelfFenced", err)
	}
	if err := w.Refence(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Round().Check(ctx, ToolCall); err != nil {
		t.Fatalf("check after the fresh acquire = %v", err)
	}
}

func TestRefenceStopsWhenAnotherProcessCommitted(t *testing.T) {
	r := newRealm(t)
	w, _ := r.open(r.opts)
	r.clock.Pause(timing().Lease())
	r.lapse()
	other, _ := r.open(r.opts)
	if err := other.Commit(ctx, Update{Scope: record("theirs"), Head: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	r.lapse()
	err := w.Refence(ctx)
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "another process committed") {
		t.Fatalf("Refence after another process committed = %v, want ErrStopped", err)
	}
	if err := w.Commit(ctx, Update{Scope: record("mine"), Head: []byte("x")}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Commit on a stopped realm = %v", err)
	}
}

func TestRefenceStopsWhenAnotherProcessHolds(t *testing.T) {
	r := newRealm(t)
	w, _ := r.open(r.opts)
	r.clock.Pause(timing().Lease())
	r.lapse()
	r.open(r.opts)
	if err := w.Refence(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Refence while another holds = %v, want ErrStopped", err)
	}
}

func TestValidation(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	s := session("s")
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	n := len(h.sent())
	for name, ups := range map[string][]Update{
		"no update":       nil,
		"two of one":      {{Scope: s, Head: []byte("a")}, {Scope: s, Head: []byte("b")}},
		"create headless": {{Scope: session("new"), Append: [][]byte{[]byte("r")}}},
		"delete absent":   {{Scope: session("absent"), Delete: true}},
		"delete and head": {{Scope: s, Delete: true, Head: []byte("x")}},
		"create truncate": {{Scope: session("new"), Head: []byte("x"), TruncateAfter: hoststore.Ptr(hoststore.RowIndex(0))}},
		"a chunk scope":   {{Scope: record(DefaultChunkPrefix + "x"), Head: []byte("x")}},
		"bad name":        {{Scope: session(""), Head: []byte("x")}},
	} {
		if err := w.Commit(ctx, ups...); err == nil {
			t.Errorf("%s: Commit accepted it", name)
		}
	}
	if len(h.sent()) != n {
		t.Fatalf("invalid changes sent batches: %v", h.sent()[n:])
	}
	if err := w.Commit(ctx, Update{Scope: s, Delete: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Head(s); ok {
		t.Fatal("a deleted scope is still held")
	}
}

func TestCommitIDsAreNeverReused(t *testing.T) {
	r := newRealm(t)
	seen := map[hoststore.CommitID]bool{}
	for i := range 3 {
		w, h := r.open(r.opts)
		for j := range 3 {
			if err := w.Commit(ctx, Update{Scope: session("s"), Head: bytes.Repeat([]byte{byte(i)}, j+1)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range h.sent() {
			if seen[id] {
				t.Fatalf("commit id %q used twice", id)
			}
			seen[id] = true
		}
		w.Close()
		r.lapse()
	}
}

package scripted

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/writer"
)

// obsHarness drives an observer with events, as an obsStore would.
type obsHarness struct {
	t *testing.T
	c *writer.ManualClock
	o *observer
}

func newObsHarness(t *testing.T) *obsHarness {
	c := writer.NewManualClock()
	return &obsHarness{t: t, c: c, o: newObserver(c, 20*time.Second, &idLog{m: map[hoststore.CommitID][32]byte{}})}
}

func (h *obsHarness) findings() []string {
	var out []string
	for _, f := range h.o.Findings() {
		out = append(out, f.message)
	}
	return out
}

func (h *obsHarness) want(n int, contains string) {
	h.t.Helper()
	fs := h.findings()
	if len(fs) != n {
		h.t.Fatalf("%d findings, want %d: %q", len(fs), n, fs)
	}
	if n > 0 && !strings.Contains(fs[n-1], contains) {
		h.t.Fatalf("finding %q does not say %q", fs[n-1], contains)
	}
}

func batch(t *testing.T, id string, scope string, head string) *hoststore.CommitBatch {
	t.Helper()
	h := []byte(head)
	b, err := hoststore.NewCommitBatch(hoststore.CommitID(id), 1, []hoststore.ScopeUpdate{{Scope: hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(scope)}, Next: 1, Head: &h}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestObserverSelfFence(t *testing.T) {
	h := newObsHarness(t)
	h.o.open(1, false)
	h.o.acquired(1, hoststore.Exclusive, h.c.Now(), hoststore.FenceGrant{Token: 1}, nil)
	h.c.Advance(19 * time.Second)
	h.o.called(1, "a tool call")
	h.want(0, "")
	h.c.Advance(time.Second)
	h.o.called(1, "a tool call")
	h.want(1, "self-fence window")
	// A renew after the window closed does not make it live again.
	h.o.renewed(1, h.c.Now(), nil)
	h.o.called(1, "a model call")
	h.want(2, "renew had failed or come after its window closed")
	// A fresh acquire does.
	h.o.acquired(1, hoststore.Exclusive, h.c.Now(), hoststore.FenceGrant{Token: 2}, nil)
	h.o.called(1, "a model call")
	h.want(2, "")
	h.o.renewed(1, h.c.Now(), &hoststore.UnavailableError{})
	h.o.sending(1, batch(t, "x", "s", "v"), h.c.Now())
	h.want(4, "without loading the heads") // while fenced, and before any listing
}

func TestObserverTakeovers(t *testing.T) {
	h := newObsHarness(t)
	h.o.open(1, false)
	h.o.acquired(1, hoststore.Takeover, h.c.Now(), hoststore.FenceGrant{Token: 1}, nil)
	h.want(1, "not asked to take over")
	h.o.open(2, true)
	h.o.acquired(2, hoststore.Takeover, h.c.Now(), hoststore.FenceGrant{Token: 2, SupersededLease: 30 * time.Second}, nil)
	h.want(1, "")
	h.c.Advance(29 * time.Second)
	h.o.renewed(2, h.c.Now().Add(-20*time.Second), nil)
	h.o.renewed(2, h.c.Now().Add(-11*time.Second), nil)
	h.o.called(2, "a model call")
	h.want(2, "before the lease it superseded ran out")
	h.c.Advance(time.Second)
	h.o.called(2, "a model call")
	h.want(2, "")
	// Taking over its own lease after Held with its own token is the writer's way.
	h.o.acquired(2, hoststore.Exclusive, h.c.Now(), hoststore.FenceGrant{}, &hoststore.HeldError{Holder: 2})
	h.o.acquired(2, hoststore.Takeover, h.c.Now(), hoststore.FenceGrant{Token: 3}, nil)
	h.want(2, "")
	h.o.acquired(2, hoststore.Exclusive, h.c.Now(), hoststore.FenceGrant{}, &hoststore.HeldError{Holder: 9})
	h.o.acquired(2, hoststore.Takeover, h.c.Now(), hoststore.FenceGrant{Token: 10}, nil)
	h.want(2, "") // p2 was opened for an explicit takeover
}

func TestObserverCommitIDsAndUnknownOutcomes(t *testing.T) {
	h := newObsHarness(t)
	h.o.open(1, false)
	h.o.acquired(1, hoststore.Exclusive, h.c.Now(), hoststore.FenceGrant{Token: 1}, nil)
	h.o.listed(1)
	a := batch(t, "a", "s", "v1")
	h.o.sending(1, a, h.c.Now())
	h.o.answered(1, a, &hoststore.IndeterminateError{})
	h.o.sending(1, a, h.c.Now()) // the same batch again: fine
	h.want(0, "")
	h.o.answered(1, a, &hoststore.IndeterminateError{})
	b := batch(t, "b", "s", "v2")
	h.o.sending(1, b, h.c.Now())
	h.want(1, "unknown outcome")
	h.o.loaded(1, b.Scopes()[0])
	c := batch(t, "c", "s", "v3")
	h.o.sending(1, c, h.c.Now())
	h.want(1, "")
	h.o.answered(1, c, nil)
	if !h.o.landed("c") || h.o.landed("a") {
		t.Fatal("landed")
	}
	h.o.sending(1, batch(t, "c", "s", "other"), h.c.Now())
	h.want(2, "never reused for different content")
	if !slices.ContainsFunc(h.o.Findings(), func(f finding) bool { return f.ob == chapter.ObWriter }) {
		t.Fatal("findings name ob:writer")
	}
}

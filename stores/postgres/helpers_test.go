package postgres_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/stores/postgres"
)

// testInj is the injector the tests hold commits on; each test claims the
// commit it holds.
var testInj = faults.NewInjector()

// open opens a handle over f, closed at the end of the test.
func open(t *testing.T, f *postgres.Factory) *postgres.Store {
	t.Helper()
	s, err := f.OpenStore(t.Context())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// writer opens a handle and takes the fence with Takeover.
func writer(t *testing.T, f *postgres.Factory) (*postgres.Store, hoststore.FenceToken) {
	t.Helper()
	s := open(t, f)
	g, err := s.AcquireFence(t.Context(), hoststore.Takeover)
	if err != nil {
		t.Fatalf("AcquireFence(Takeover): %v", err)
	}
	return s, g.Token
}

var seq atomic.Int64

// id makes a commit id unique within the test binary.
func id(tag string) hoststore.CommitID {
	return hoststore.CommitID(fmt.Sprintf("%s-%d", tag, seq.Add(1)))
}

func batch(t testing.TB, id hoststore.CommitID, tok hoststore.FenceToken, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(id, tok, ups)
	if err != nil {
		t.Fatalf("NewCommitBatch: %v", err)
	}
	return b
}

func commit(t *testing.T, s hoststore.HostStore, b *hoststore.CommitBatch) {
	t.Helper()
	if err := s.Commit(t.Context(), b); err != nil {
		t.Fatalf("Commit(%s): %v", b, err)
	}
}

func scope(kind hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: kind, Name: hoststore.ScopeName(name)}
}

func create(ref hoststore.ScopeRef, head string, rows ...string) hoststore.ScopeUpdate {
	u := hoststore.ScopeUpdate{Scope: ref, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte(head))}
	for _, r := range rows {
		u.Append = append(u.Append, []byte(r))
	}
	return u
}

func next(ref hoststore.ScopeRef, prev hoststore.ScopeVersion, head string, rows ...string) hoststore.ScopeUpdate {
	u := hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(prev), Next: prev + 1, Head: hoststore.Ptr([]byte(head))}
	for _, r := range rows {
		u.Append = append(u.Append, []byte(r))
	}
	return u
}

// wantHead checks ref's visible head: version 0 means absent.
func wantHead(t *testing.T, s hoststore.HostStore, ref hoststore.ScopeRef, v hoststore.ScopeVersion, cid hoststore.CommitID, head string) {
	t.Helper()
	h, err := s.LoadHead(t.Context(), ref)
	switch {
	case err != nil:
		t.Errorf("LoadHead(%s): %v", ref, err)
	case v == 0 && h != nil:
		t.Errorf("LoadHead(%s) = version %d by %q, want absent", ref, h.Version, h.CommitID)
	case v != 0 && h == nil:
		t.Errorf("LoadHead(%s) = absent, want version %d by %q", ref, v, cid)
	case v != 0 && (h.Version != v || h.CommitID != cid || string(h.Head) != head):
		t.Errorf("LoadHead(%s) = {%d %q %q}, want {%d %q %q}", ref, h.Version, h.CommitID, h.Head, v, cid, head)
	}
}

// wantRows checks every visible row of ref from index 0.
func wantRows(t *testing.T, s hoststore.HostStore, ref hoststore.ScopeRef, want ...string) {
	t.Helper()
	rows, err := s.ReadRows(t.Context(), ref, 0, 1000)
	if err != nil {
		t.Errorf("ReadRows(%s): %v", ref, err)
		return
	}
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = fmt.Sprintf("%d:%s", r.Index, r.Data)
	}
	exp := make([]string, len(want))
	for i, w := range want {
		exp[i] = fmt.Sprintf("%d:%s", i, w)
	}
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("ReadRows(%s) = %v, want %v", ref, got, exp)
	}
}

// hold commits b on its own goroutine with a hold at site and waits until
// the commit arrives there; the commit's answer comes on the channel.
func hold(t *testing.T, s hoststore.HostStore, b *hoststore.CommitBatch, site instore.Site) (*faults.Hold, <-chan error) {
	t.Helper()
	testInj.Claim(b.CommitID())
	h := testInj.HoldAt(site, func(c hoststore.CommitID) bool { return c == b.CommitID() })
	t.Cleanup(h.Disarm)
	res := make(chan error, 1)
	go func() { res <- s.Commit(t.Context(), b) }()
	select {
	case <-h.Arrived():
	case err := <-res:
		t.Fatalf("Commit(%q) answered %v without reaching %s", b.CommitID(), err, site)
	}
	return h, res
}

// kindIs reports whether err is of the contract kind k.
func kindIs(err error, k hoststore.ErrorKind) bool { return hoststore.KindOf(err) == k }

// fencedOut returns err as a *FencedOutError, or nil.
func fencedOut(err error) *hoststore.FencedOutError {
	var f *hoststore.FencedOutError
	if errors.As(err, &f) {
		return f
	}
	return nil
}

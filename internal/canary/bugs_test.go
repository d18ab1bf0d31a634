package canary

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

func TestBugsNamesRoundTrip(t *testing.T) {
	all := AllBugs()
	if len(all) != len(bugNames)-1 {
		t.Fatalf("AllBugs has %d bugs, the names table %d besides no-sites", len(all), len(bugNames)-1)
	}
	if got, err := Parse("no-sites+ignore-token"); err != nil || got != NoSites|IgnoreToken || got.String() != "ignore-token+no-sites" {
		t.Errorf("Parse(no-sites+ignore-token) = %v (%s), %v", got, got, err)
	}
	seen := map[string]bool{}
	for _, b := range all {
		name := b.String()
		if seen[name] || strings.Contains(name, "+") || name == "correct" {
			t.Errorf("bug %#x has a bad or duplicate name %q", uint32(b), name)
		}
		seen[name] = true
		got, err := Parse(name)
		if err != nil || got != b {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, got, err, b)
		}
	}
	both := TornBatch | Hangs
	if got, err := Parse(both.String()); err != nil || got != both {
		t.Errorf("Parse(%q) = %v, %v; want %v", both.String(), got, err, both)
	}
	for _, s := range []string{"", "correct"} {
		if got, err := Parse(s); err != nil || got != 0 {
			t.Errorf("Parse(%q) = %v, %v; want no bug", s, got, err)
		}
	}
	if _, err := Parse("torn-batch+nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Parse of an unknown name: err = %v, want one naming it", err)
	}
	if !both.Has(Hangs) || both.Has(Panics) || both.Has(0) {
		t.Errorf("Has is wrong for %v", both)
	}
}

// TestCorrectStoreBasics checks by hand the few returns the chapter's
// control run does not pin down on its own: the error types of a refused
// commit and renew, and a killed handle.
func TestCorrectStoreBasics(t *testing.T) {
	ctx := context.Background()
	f := NewFactory(0)
	st, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g, err := st.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil || g.Token != 1 || g.SupersededLease != 0 {
		t.Fatalf("first acquire = %+v, %v; want token 1, no superseded lease", g, err)
	}
	s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "a"}
	create := mustBatch(t, "c1", g.Token, hoststore.ScopeUpdate{Scope: s, Next: 1, Head: &[]byte{}})
	if err := st.Commit(ctx, create); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := st.Commit(ctx, create); err != nil {
		t.Fatalf("a retry of a landed batch: %v, want nil", err)
	}
	again := mustBatch(t, "c2", g.Token, hoststore.ScopeUpdate{Scope: s, Next: 1, Head: &[]byte{}})
	var conflict *hoststore.ConflictError
	if err := st.Commit(ctx, again); !errors.As(err, &conflict) || conflict.Current == nil || *conflict.Current != 1 {
		t.Fatalf("a second create: %v, want Conflict at version 1", err)
	}
	q, _ := f.Open(ctx)
	g2, err := q.AcquireFence(ctx, hoststore.Takeover)
	if err != nil || g2.Token != 2 || g2.SupersededLease != hoststore.FenceLease {
		t.Fatalf("takeover = %+v, %v; want token 2 superseding a whole lease", g2, err)
	}
	stale := mustBatch(t, "c3", g.Token, hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(hoststore.FirstVersion), Next: 2})
	var fenced *hoststore.FencedOutError
	if err := st.Commit(ctx, stale); !errors.As(err, &fenced) || fenced.Current != 2 {
		t.Fatalf("a stale commit: %v, want FencedOut by 2", err)
	}
	if err := st.RenewFence(ctx, g.Token); !errors.As(err, &fenced) {
		t.Fatalf("a superseded renew: %v, want FencedOut", err)
	}
	if err := q.RenewFence(ctx, 99); hoststore.KindOf(err) != hoststore.ErrKindInvalid {
		t.Fatalf("a renew of a token never issued: %v, want Invalid", err)
	}
	st.(hoststore.Killer).Kill()
	if _, err := st.LoadHead(ctx, s); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Fatalf("a call to a killed handle: %v, want Unavailable", err)
	}
}

func mustBatch(t *testing.T, id string, token hoststore.FenceToken, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(hoststore.CommitID(id), token, ups)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSiteTwicePublish shows what only a schedule that reaches
// commit-before-point twice can see, and what the table leaves to
// exploration: the site's first pass meets a correct store, its second
// pass a batch that loads already show and that a crash there takes back.
// The correct store never reaches the site a second time.
func TestSiteTwicePublish(t *testing.T) {
	for _, bugs := range []Bugs{0, SiteTwicePublish} {
		t.Run(bugs.String(), func(t *testing.T) {
			ctx := context.Background()
			f := NewFactory(bugs)
			w, _ := f.Open(ctx)
			g, err := w.AcquireFence(ctx, hoststore.Exclusive)
			if err != nil {
				t.Fatal(err)
			}
			s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "twice"}
			b := mustBatch(t, "twice-1", g.Token, hoststore.ScopeUpdate{Scope: s, Next: 1, Head: &[]byte{'h'}})
			inj := faults.NewInjector()
			inj.Claim(b.CommitID())
			first := inj.HoldAt(instore.CommitBeforePoint, nil)
			defer first.Disarm()
			second := inj.HoldAt(instore.CommitBeforePoint, nil)
			defer second.Disarm()
			res := make(chan error, 1)
			go func() { res <- w.Commit(ctx, b) }()
			<-first.Arrived()
			r, _ := f.Open(ctx)
			if h, err := r.LoadHead(ctx, s); h != nil || err != nil {
				t.Fatalf("held at the first pass, a load shows %+v, %v; want nothing", h, err)
			}
			first.Release()
			select {
			case err := <-res:
				if bugs != 0 || err != nil {
					t.Fatalf("the commit answered %v after one pass; want the correct store to answer nil, the canary to pass again", err)
				}
				if h, _ := r.LoadHead(ctx, s); h == nil {
					t.Fatal("the correct store's commit answered nil, yet the batch does not show")
				}
				return
			case <-second.Arrived():
				if bugs == 0 {
					t.Fatal("the correct store passed commit-before-point twice")
				}
			}
			if h, _ := r.LoadHead(ctx, s); h == nil || h.CommitID != b.CommitID() {
				t.Fatalf("held at the second pass, a load shows %+v; want the published batch", h)
			}
			second.Crash()
			if err := <-res; !errors.Is(err, instore.ErrCrashed) {
				t.Fatalf("crashed at the second pass, the commit answered %v; want ErrCrashed", err)
			}
			if h, _ := r.LoadHead(ctx, s); h != nil {
				t.Fatalf("after the crash a load shows %+v; want the batch taken back", h)
			}
		})
	}
}

// TestBugsFitBelowNoSites checks that the bugs' bits stay clear of
// NoSites, which is no bug and must not be one of them.
func TestBugsFitBelowNoSites(t *testing.T) {
	if bugEnd > NoSites {
		t.Fatalf("%d bugs reach NoSites's bit: move NoSites up", len(AllBugs()))
	}
	for _, b := range AllBugs() {
		if b.Has(NoSites) {
			t.Errorf("bug %s shares NoSites's bit", b)
		}
	}
}

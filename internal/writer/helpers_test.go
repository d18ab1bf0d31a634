package writer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/reference"
)

// rec records the requests a writer sends, in order, around a fault
// wrapper the test can inject into.
type rec struct {
	*faults.Store
	mu    sync.Mutex
	calls []string
	ids   []hoststore.CommitID
}

func (r *rec) log(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *rec) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if len(c) >= len(prefix) && c[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

func (r *rec) sent() []hoststore.CommitID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hoststore.CommitID(nil), r.ids...)
}

func (r *rec) AcquireFence(ctx context.Context, m hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	g, err := r.Store.AcquireFence(ctx, m)
	r.log("acquire %s = %d %v", m, g.Token, err)
	return g, err
}

func (r *rec) RenewFence(ctx context.Context, tok hoststore.FenceToken) error {
	err := r.Store.RenewFence(ctx, tok)
	r.log("renew %d = %v", tok, err)
	return err
}

func (r *rec) ListHeads(ctx context.Context, k hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	pg, err := r.Store.ListHeads(ctx, k, after, limit)
	r.log("list %s", k)
	return pg, err
}

func (r *rec) LoadHead(ctx context.Context, s hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	h, err := r.Store.LoadHead(ctx, s)
	r.log("load %s", s)
	return h, err
}

func (r *rec) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	err := r.Store.Commit(ctx, b)
	r.mu.Lock()
	r.ids = append(r.ids, b.CommitID())
	r.mu.Unlock()
	r.log("commit %s %d = %v", b.CommitID(), b.Len(), err)
	return err
}

// realm is a reference realm, a shared manual clock and the options every
// writer of a test uses.
type realm struct {
	t     *testing.T
	f     *reference.Factory
	clock *ManualClock
	opts  Options
}

func newRealm(t *testing.T) *realm {
	t.Helper()
	c := NewManualClock()
	return &realm{t: t, f: reference.NewFactory(), clock: c, opts: Options{Clock: c}}
}

// handle opens a new process over the realm.
func (r *realm) handle() *rec {
	r.t.Helper()
	st, err := r.f.Open(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return &rec{Store: faults.NewInjector().Wrap(st)}
}

// open opens a writer on a new handle with opts.
func (r *realm) open(opts Options) (*Writer, *rec) {
	r.t.Helper()
	h := r.handle()
	w, err := Open(context.Background(), h, opts)
	if err != nil {
		r.t.Fatalf("Open: %v", err)
	}
	r.t.Cleanup(w.Close)
	return w, h
}

// lapse lets every recorded lease run out.
func (r *realm) lapse() {
	r.t.Helper()
	if err := r.f.LapseFenceLeases(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

func session(name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: hoststore.KindSession, Name: hoststore.ScopeName(name)}
}

func record(name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(name)}
}

// mustValue reads a scope's value through a fresh handle.
func (r *realm) mustValue(s hoststore.ScopeRef) []byte {
	r.t.Helper()
	h := r.handle()
	vh, err := h.LoadHead(context.Background(), s)
	if err != nil || vh == nil {
		r.t.Fatalf("LoadHead(%s) = %v, %v", s, vh, err)
	}
	v, err := ReadValue(context.Background(), h, vh.Head)
	if err != nil {
		r.t.Fatalf("ReadValue(%s): %v", s, err)
	}
	return v
}

// chunkScopes lists the chunk scopes visible in the realm.
func (r *realm) chunkScopes() []hoststore.ScopeName {
	r.t.Helper()
	h := r.handle()
	var out []hoststore.ScopeName
	var after *hoststore.ScopeName
	for {
		pg, err := h.ListHeads(context.Background(), hoststore.KindRecord, after, 100)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, nh := range pg.Heads {
			if IsChunk(r.opts.ChunkPrefix, hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: nh.Name}) {
				out = append(out, nh.Name)
			}
		}
		if pg.Next == nil {
			return out
		}
		after = pg.Next
	}
}

func bigValue(n int, seed byte) []byte {
	v := make([]byte, n)
	x := uint32(seed) + 1
	for i := range v {
		x = x*1664525 + 1013904223
		v[i] = byte(x >> 24)
	}
	return v
}

var ctx = context.Background()

// timing returns the reference's default timing, for readability.
func timing() hoststore.FenceTiming { return hoststore.DefaultFenceTiming() }

var _ = time.Second

func faultRenewUnavailable() faults.Rule {
	return faults.Rule{Op: faults.OpRenew, Phase: faults.BeforeSend, Effect: faults.EffectUnavailable}
}

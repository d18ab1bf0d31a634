package writer

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
)

// smallLimits makes a few KiB need chunks and several batches.
func smallLimits(r *realm) Options {
	o := r.opts
	o.ChunkThreshold = 1 << 10
	o.Limits = Limits{BatchBytes: 4 << 10, RowBytes: 1 << 10}
	return o
}

func TestLargeValuesGoToChunksInSeveralBatches(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	w, h := r.open(r.opts)
	s, rec0 := session("s"), record("out")
	v1, v2 := bigValue(10<<10, 1), bigValue(3<<10, 2)
	n := len(h.sent())
	if err := w.Commit(ctx, Update{Scope: s, Head: v1, Append: [][]byte{[]byte("row")}}, Update{Scope: rec0, Head: v2}); err != nil {
		t.Fatal(err)
	}
	batches := len(h.sent()) - n
	// 13 KiB of chunks in batches of 4 KiB at most, then the commit batch.
	if batches < 5 {
		t.Fatalf("the change went in %d batches, want at least 4 chunk batches and a commit batch", batches)
	}
	if got := r.mustValue(s); !bytes.Equal(got, v1) {
		t.Fatal("the chunked session value does not read back")
	}
	if got := r.mustValue(rec0); !bytes.Equal(got, v2) {
		t.Fatal("the chunked record value does not read back")
	}
	if c := r.chunkScopes(); len(c) != 2 {
		t.Fatalf("chunk scopes %v, want one per large value", c)
	}
	if v, _, err := w.Value(ctx, s); err != nil || !bytes.Equal(v, v1) {
		t.Fatalf("Writer.Value: %v", err)
	}
	// Superseding and deleting drop the chunks in the same batch.
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("small now")}, Update{Scope: rec0, Delete: true}); err != nil {
		t.Fatal(err)
	}
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("chunk scopes %v survive the commit that superseded them", c)
	}
}

func TestTenMiBValueAtTheSpecsLimits(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	v := bigValue(10<<20, 3)
	n := len(h.sent())
	if err := w.Commit(ctx, Update{Scope: record("big"), Head: v}); err != nil {
		t.Fatal(err)
	}
	if got := len(h.sent()) - n; got != 3 {
		t.Fatalf("10 MiB went in %d batches, want 2 chunk batches and the commit batch", got)
	}
	if got := r.mustValue(record("big")); !bytes.Equal(got, v) {
		t.Fatal("the 10 MiB value does not read back")
	}
}

func TestSizeErrorsWriteNothing(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	w, h := r.open(r.opts)
	n := len(h.sent())
	var se *SizeError
	err := w.Commit(ctx, Update{Scope: session("s"), Head: []byte("x"), Append: [][]byte{make([]byte, 2<<10)}})
	if !errors.As(err, &se) || se.Limit != 1<<10 {
		t.Fatalf("a row over the limit = %v, want a *SizeError", err)
	}
	rows := make([][]byte, 5)
	for i := range rows {
		rows[i] = make([]byte, 1<<10)
	}
	err = w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(50<<10, 1), Append: rows})
	if !errors.As(err, &se) {
		t.Fatalf("rows over the batch limit = %v, want a *SizeError", err)
	}
	if got := h.sent()[n:]; len(got) != 0 {
		t.Fatalf("a change that cannot be written sent %v", got)
	}
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("chunks %v written for a change that cannot be written", c)
	}
}

func TestManyMidSizedHeadsAreChunkedToFit(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	r.opts.ChunkThreshold = 8 << 10 // none is large on its own
	w, _ := r.open(r.opts)
	var ups []Update
	for i := range 4 {
		ups = append(ups, Update{Scope: record("r" + string(rune('a'+i))), Head: bigValue(3<<10, byte(i))})
	}
	if err := w.Commit(ctx, ups...); err != nil {
		t.Fatal(err)
	}
	for i, u := range ups {
		if !bytes.Equal(r.mustValue(u.Scope), u.Head) {
			t.Fatalf("value %d does not read back", i)
		}
	}
	if c := r.chunkScopes(); len(c) < 3 {
		t.Fatalf("%d heads chunked, want enough to fit 12 KiB of heads in 4 KiB", len(c))
	}
}

func TestStoreInvalidIsASizeError(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	w, h := r.open(r.opts)
	h.Store = faults.NewInjector().Wrap(&invalidOnCommit{HostStore: h.Store})
	var se *SizeError
	err := w.Commit(ctx, Update{Scope: session("s"), Head: []byte("x")})
	var inv *hoststore.InvalidError
	if !errors.As(err, &se) || !errors.As(err, &inv) {
		t.Fatalf("a batch the store refuses as Invalid = %v, want a *SizeError wrapping it", err)
	}
}

type invalidOnCommit struct{ hoststore.HostStore }

func (invalidOnCommit) Commit(context.Context, *hoststore.CommitBatch) error {
	return &hoststore.InvalidError{Detail: "too large for this store"}
}

func TestGarbageChunksGoAtOpenAndBySweep(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	w, h := r.open(r.opts)
	// The commit batch (the one that is not a chunk batch) is refused:
	// its chunks are left behind.
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectUnavailable,
		Match: func(b *hoststore.CommitBatch) bool {
			return slices.ContainsFunc(b.Scopes(), func(s hoststore.ScopeRef) bool { return s.Kind == hoststore.KindSession })
		}})
	if err := w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(5<<10, 1)}); err == nil {
		t.Fatal("the refused commit batch answered nil")
	}
	if c := r.chunkScopes(); len(c) != 1 {
		t.Fatalf("chunk scopes %v, want the failed change's one", c)
	}
	if err := w.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("Sweep left %v", c)
	}
	// Left again, then a new process deletes them at Open.
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectKill,
		Match: func(b *hoststore.CommitBatch) bool {
			return slices.ContainsFunc(b.Scopes(), func(s hoststore.ScopeRef) bool { return s.Kind == hoststore.KindSession })
		}})
	if err := w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(5<<10, 2)}); err == nil {
		t.Fatal("the killed commit answered nil")
	}
	w.Close()
	if c := r.chunkScopes(); len(c) != 1 {
		t.Fatalf("chunk scopes %v, want the killed change's one", c)
	}
	r.lapse()
	r.open(r.opts)
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("Open left garbage chunks %v", c)
	}
}

func TestBackgroundSweepRunsOnTheClock(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	r.opts.SweepEvery = 15 * time.Second
	w, h := r.open(r.opts)
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectUnavailable,
		Match: func(b *hoststore.CommitBatch) bool {
			return slices.ContainsFunc(b.Scopes(), func(s hoststore.ScopeRef) bool { return s.Kind == hoststore.KindSession })
		}})
	if err := w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(5<<10, 1)}); err == nil {
		t.Fatal("the refused commit batch answered nil")
	}
	r.clock.Advance(14 * time.Second)
	if c := r.chunkScopes(); len(c) != 1 {
		t.Fatalf("chunk scopes %v before the sweep is due", c)
	}
	r.clock.Advance(time.Second)
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("the background sweep left %v", c)
	}
	if err := w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(5<<10, 1)}); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Minute)
	if c := r.chunkScopes(); len(c) != 1 {
		t.Fatalf("the sweep deleted a referenced chunk: %v", c)
	}
	if !strings.HasPrefix(string(r.chunkScopes()[0]), DefaultChunkPrefix) {
		t.Fatal("chunk scope outside the prefix")
	}
}

package writer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
)

func TestAnswerLostIsSettledByTheSameBatch(t *testing.T) {
	r := newRealm(t)
	w, h := r.open(r.opts)
	s := session("s")
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate})
	n := len(h.sent())
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v2"), Append: [][]byte{[]byte("once")}}); err != nil {
		t.Fatalf("a commit whose first answer was lost = %v, want settled by its retry", err)
	}
	ids := h.sent()[n:]
	if len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("sent %v, want the same batch twice", ids)
	}
	rows, err := r.handle().ReadRows(ctx, s, 0, 10)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, %v: the retry must act once", rows, err)
	}
	if hd, _ := w.Head(s); hd.Version != 2 || hd.CommitID != ids[0] {
		t.Fatalf("the writer holds %+v after settling", hd)
	}
}

func TestUnknownOutcomeIsSettledBeforeTheScopesNextVersion(t *testing.T) {
	r := newRealm(t)
	r.opts.SettleTries = 2
	w, h := r.open(r.opts)
	s := session("s")
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectIndeterminate, Times: 2})
	n := len(h.sent())
	err := w.Commit(ctx, Update{Scope: s, Head: []byte("v2")})
	var ind *hoststore.IndeterminateError
	if !errors.As(err, &ind) {
		t.Fatalf("a commit whose outcome stays unknown = %v, want the Indeterminate", err)
	}
	unknown := h.sent()[n]
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v3")}); err != nil {
		t.Fatal(err)
	}
	ids := h.sent()[n:]
	// two unknown sends, the same batch again (it lands), then v3
	if len(ids) != 4 || ids[1] != unknown || ids[2] != unknown || ids[3] == unknown {
		t.Fatalf("sent %v, want the unknown batch settled (sent again) before the next version", ids)
	}
	if hd, _ := w.Head(s); hd.Version != 3 {
		t.Fatalf("version %d, want 3 (v2 landed when settled, then v3)", hd.Version)
	}
}

func TestUnknownOutcomeIsSettledByTheFreshAcquire(t *testing.T) {
	r := newRealm(t)
	r.opts.SettleTries = 1
	w, h := r.open(r.opts)
	s := session("s")
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate})
	if err := w.Commit(ctx, Update{Scope: s, Head: []byte("v1")}); err == nil {
		t.Fatal("want the outcome unknown")
	}
	r.clock.Pause(timing().SelfFenceWindow())
	if err := w.Refence(ctx); err != nil {
		t.Fatalf("Refence = %v: its own batch that landed is not another process's commit", err)
	}
	if hd, ok := w.Head(s); !ok || hd.Version != 1 {
		t.Fatalf("after the fresh acquire the writer holds %+v, %v; want the settled batch", hd, ok)
	}
}

func TestUnsafeWritersBreakTheirRule(t *testing.T) {
	t.Run("skip self-fence", func(t *testing.T) {
		r := newRealm(t)
		r.opts.Unsafe.SkipSelfFence = true
		w, _ := r.open(r.opts)
		r.clock.Pause(time.Hour)
		if err := w.Round().Check(ctx, ToolCall); err != nil {
			t.Fatalf("the unsafe check refused: %v", err)
		}
	})
	t.Run("skip takeover wait", func(t *testing.T) {
		r := newRealm(t)
		r.open(r.opts)
		r.opts.Unsafe.SkipTakeoverWait = true
		r.opts.Takeover = true
		w, _ := r.open(r.opts)
		start := r.clock.Now()
		if err := w.Round().Check(ctx, ModelCall); err != nil || r.clock.Since(start) != 0 {
			t.Fatalf("the unsafe check = %v after waiting %s, want no wait", err, r.clock.Since(start))
		}
	})
	t.Run("reuse commit ids", func(t *testing.T) {
		r := newRealm(t)
		r.opts.Unsafe.ReuseCommitIDs = true
		if !r.opts.Unsafe.Any() || (Unsafe{}).Any() {
			t.Fatal("Any")
		}
		w, h1 := r.open(r.opts)
		if err := w.Commit(ctx, Update{Scope: session("a"), Head: []byte("1")}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		r.lapse()
		w2, h2 := r.open(r.opts)
		if err := w2.Commit(ctx, Update{Scope: session("b"), Head: []byte("2")}); err != nil {
			t.Fatal(err)
		}
		if h1.sent()[0] != h2.sent()[0] {
			t.Fatalf("ids %v and %v: the unsafe writer did not reuse", h1.sent(), h2.sent())
		}
	})
}

func TestOptionsAreChecked(t *testing.T) {
	r := newRealm(t)
	for name, o := range map[string]Options{
		"batch over the limit": {Limits: Limits{BatchBytes: hoststore.MaxBatchBytes + 1}},
		"row over the limit":   {Limits: Limits{RowBytes: hoststore.MaxRowBytes + 1}},
		"tiny batch":           {Limits: Limits{BatchBytes: 10}},
		"bad prefix":           {ChunkPrefix: "a\x00"},
		"long prefix":          {ChunkPrefix: strings.Repeat("p", 450)},
		"negative sweep":       {SweepEvery: -time.Second},
	} {
		if _, err := Open(ctx, r.handle(), o); err == nil {
			t.Errorf("%s: Open accepted it", name)
		}
	}
}

func TestSweepSettlesUnknownChunkBatchesFirst(t *testing.T) {
	r := newRealm(t)
	r.opts = smallLimits(r)
	r.opts.SettleTries = 1
	w, h := r.open(r.opts)
	// The second chunk batch's answer is lost: the chunk scope exists, and
	// a batch appending to it has an unknown outcome.
	n := 0
	h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate,
		Match: func(*hoststore.CommitBatch) bool { n++; return n == 2 }})
	if err := w.Commit(ctx, Update{Scope: session("s"), Head: bigValue(6<<10, 1)}); err == nil {
		t.Fatal("want the change to fail with an unknown chunk batch")
	}
	unknown := h.sent()[len(h.sent())-1]
	m := len(h.sent())
	if err := w.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	ids := h.sent()[m:]
	if len(ids) < 2 || ids[0] != unknown {
		t.Fatalf("the sweep sent %v; want the unknown batch %q settled first", ids, unknown)
	}
	if c := r.chunkScopes(); len(c) != 0 {
		t.Fatalf("the sweep left %v", c)
	}
}

package reference

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// benchHead is the 100-byte head of the commit benchmarks.
var benchHead = make([]byte, 100)

// nextBatch is a one-scope commit moving s from v to v+1 with the
// benchmark head and one 32-byte row.
func nextBatch(b *testing.B, id string, tok hoststore.FenceToken, s hoststore.ScopeRef, v hoststore.ScopeVersion) *hoststore.CommitBatch {
	h := benchHead
	u := hoststore.ScopeUpdate{Scope: s, Previous: &v, Next: v + 1, Head: &h, Append: [][]byte{make([]byte, 32)}}
	cb, err := hoststore.NewCommitBatch(hoststore.CommitID(id), tok, []hoststore.ScopeUpdate{u})
	if err != nil {
		b.Fatal(err)
	}
	return cb
}

// BenchmarkCommitSmall: one-scope commits, each the next version of a
// pre-created scope, with a 100-byte head and one row. Batches are built
// outside the timer, in blocks.
func BenchmarkCommitSmall(b *testing.B) {
	s, tok := fenced(b, NewFactory())
	scope := sess("bench")
	mustCommit(b, s, batch(b, "create", tok, create(scope, "h")))
	const block = 4096
	batches := make([]*hoststore.CommitBatch, block)
	v := hoststore.FirstVersion
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%block == 0 {
			b.StopTimer()
			for j := range batches {
				batches[j] = nextBatch(b, fmt.Sprint("c", i+j), tok, scope, v+hoststore.ScopeVersion(j))
			}
			b.StartTimer()
		}
		if err := s.Commit(ctx, batches[i%block]); err != nil {
			b.Fatal(err)
		}
		if i%block == block-1 {
			v += block
		}
	}
}

// BenchmarkNewCommitBatch is the cost of building one batch of
// BenchmarkCommitSmall, which the parallel benchmarks include.
func BenchmarkNewCommitBatch(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		nextBatch(b, "c", 1, sess("bench"), 1)
	}
}

// BenchmarkNewCommitBatchParallel builds batches from GOMAXPROCS
// goroutines: work that shares nothing, the control for the speed-up
// BenchmarkCommitParallel256 can show on this machine.
func BenchmarkNewCommitBatchParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			nextBatch(b, "c", 1, sess("bench"), 1)
		}
	})
}

// commit256 commits on 256 pre-created scopes from goroutines that each
// own a share of them (goroutine g owns the scopes i with i%share == g);
// every commit builds its batch (see BenchmarkNewCommitBatch).
func commit256(b *testing.B, parallel bool) {
	f := NewFactory()
	s, tok := fenced(b, f)
	const n = 256
	scopes := make([]hoststore.ScopeRef, n)
	for i := range scopes {
		scopes[i] = sess(fmt.Sprintf("s%03d", i))
		mustCommit(b, s, batch(b, fmt.Sprint("create", i), tok, create(scopes[i], "h")))
	}
	share := 1
	if parallel {
		share = runtime.GOMAXPROCS(0)
	}
	var goroutines atomic.Int64
	work := func(next func() bool) {
		g := int(goroutines.Add(1) - 1)
		h := openStore(b, f)
		versions := make(map[int]hoststore.ScopeVersion)
		mine := []int{}
		for i := g; i < n; i += share {
			mine = append(mine, i)
			versions[i] = hoststore.FirstVersion
		}
		ctx := context.Background()
		for k := 0; next(); k++ {
			i := mine[k%len(mine)]
			if err := h.Commit(ctx, nextBatch(b, fmt.Sprint("g", g, "-", k), tok, scopes[i], versions[i])); err != nil {
				b.Error(err)
				return
			}
			versions[i]++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		i := 0
		work(func() bool { i++; return i <= b.N })
		return
	}
	b.RunParallel(func(pb *testing.PB) { work(pb.Next) })
}

// BenchmarkCommitParallel256 commits on 256 scopes from GOMAXPROCS
// goroutines, each on its own scopes.
func BenchmarkCommitParallel256(b *testing.B) { commit256(b, true) }

// BenchmarkCommitSerial256 is the same work from one goroutine.
func BenchmarkCommitSerial256(b *testing.B) { commit256(b, false) }

// BenchmarkListHeads reads pages of 100 from a random cursor over 10,000
// and 100,000 scopes of one kind.
func BenchmarkListHeads(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, tok := fenced(b, NewFactory())
			for i := 0; i < n; i += 500 {
				ups := make([]hoststore.ScopeUpdate, 0, 500)
				for j := i; j < i+500 && j < n; j++ {
					ups = append(ups, create(sc(hoststore.KindRecord, padded(j)), "head"))
				}
				mustCommit(b, s, batch(b, fmt.Sprint("c", i), tok, ups...))
			}
			rng := rand.New(rand.NewPCG(1, 2))
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				after := hoststore.ScopeName(padded(rng.IntN(n - 100)))
				page, err := s.ListHeads(ctx, hoststore.KindRecord, &after, 100)
				if err != nil || len(page.Heads) != 100 {
					b.Fatalf("page of %d heads, %v", len(page.Heads), err)
				}
			}
		})
	}
}

// BenchmarkReadRows100 reads 100 rows of 100 bytes from a random index of
// a scope with 1,000 rows.
func BenchmarkReadRows100(b *testing.B) {
	s, tok := fenced(b, NewFactory())
	scope := sess("rows")
	u := create(scope, "h")
	for i := 0; i < 1000; i++ {
		u.Append = append(u.Append, make([]byte, 100))
	}
	mustCommit(b, s, batch(b, "c", tok, u))
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := s.ReadRows(ctx, scope, hoststore.RowIndex(rng.IntN(900)), 100)
		if err != nil || len(rows) != 100 {
			b.Fatalf("%d rows, %v", len(rows), err)
		}
	}
}

// BenchmarkFailpointDisabled is the cost the three in-store failpoints
// add to every commit when nothing is armed: compare it with
// BenchmarkCommitSmall.
func BenchmarkFailpointDisabled(b *testing.B) {
	ctx := context.Background()
	id := hoststore.CommitID("c1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, site := range instore.Sites {
			if err := instore.At(ctx, site, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

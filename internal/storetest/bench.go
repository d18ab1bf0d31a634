package storetest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// benchWriters opens handles handles over a fresh realm and takes the
// fence with the first.
func benchWriters(b *testing.B, newFactory func(testing.TB) hoststore.HostStoreFactory, handles int) ([]hoststore.HostStore, hoststore.FenceToken) {
	b.Helper()
	f := newFactory(b)
	stores := make([]hoststore.HostStore, handles)
	for i := range stores {
		s, err := f.Open(b.Context())
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		stores[i] = s
	}
	g, err := stores[0].AcquireFence(b.Context(), hoststore.Exclusive)
	if err != nil {
		b.Fatalf("AcquireFence: %v", err)
	}
	return stores, g.Token
}

// smallUpdate is the next version of one scope: a 64-byte head and one
// 128-byte row.
func smallUpdate(ref hoststore.ScopeRef, v hoststore.ScopeVersion) hoststore.ScopeUpdate {
	head := make([]byte, 64)
	row := make([]byte, 128)
	if v == 0 {
		return hoststore.ScopeUpdate{Scope: ref, Next: 1, Head: &head, Append: [][]byte{row}}
	}
	return hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(v), Next: v + 1, Head: &head, Append: [][]byte{row}}
}

// BenchCommitSmall measures the latency of one small batch commit (one
// scope: a 64-byte head and one 128-byte row), one after another.
func BenchCommitSmall(b *testing.B, newFactory func(testing.TB) hoststore.HostStoreFactory) {
	stores, tok := benchWriters(b, newFactory, 1)
	s := stores[0]
	ref := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "bench"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bt, err := hoststore.NewCommitBatch(hoststore.CommitID(fmt.Sprintf("small-%d", i)), tok, []hoststore.ScopeUpdate{smallUpdate(ref, hoststore.ScopeVersion(i))})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(b.Context(), bt); err != nil {
			b.Fatalf("Commit: %v", err)
		}
	}
}

// BenchCommitParallel measures small batch commits from writers goroutines
// at once on one handle, each on a scope of its own (ns/op is per commit,
// over all writers).
func BenchCommitParallel(b *testing.B, newFactory func(testing.TB) hoststore.HostStoreFactory, writers int) {
	stores, tok := benchWriters(b, newFactory, 1)
	commitParallel(b, stores, tok, writers, "par")
}

// BenchCommitParallelHandles is BenchCommitParallel with the writers spread
// over handles handles ("processes") of one realm, round robin: writers of
// different handles meet at the backend's own lock.
func BenchCommitParallelHandles(b *testing.B, newFactory func(testing.TB) hoststore.HostStoreFactory, writers, handles int) {
	stores, tok := benchWriters(b, newFactory, handles)
	commitParallel(b, stores, tok, writers, "handles")
}

// commitParallel runs writers goroutines, spread over stores round robin,
// each committing small batches to a scope of its own under tok; commit ids
// start with prefix.
func commitParallel(b *testing.B, stores []hoststore.HostStore, tok hoststore.FenceToken, writers int, prefix string) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((writers + procs - 1) / procs)
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := next.Add(1)
		s := stores[int(w)%len(stores)]
		ref := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(fmt.Sprintf("writer-%03d", w))}
		for v := 0; pb.Next(); v++ {
			bt, err := hoststore.NewCommitBatch(hoststore.CommitID(fmt.Sprintf("%s-%d-%d", prefix, w, v)), tok, []hoststore.ScopeUpdate{smallUpdate(ref, hoststore.ScopeVersion(v))})
			if err == nil {
				err = s.Commit(b.Context(), bt)
			}
			if err != nil {
				b.Errorf("writer %d: Commit: %v", w, err)
				return
			}
		}
	})
}

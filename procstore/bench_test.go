package procstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore"
	"github.com/conform-spi/conform/reference"
)

// commitLoop commits n small batches to st (a head of 32 bytes and one row
// of 64 on one scope, each the next version) and returns the time they
// took.
func commitLoop(b *testing.B, ctx context.Context, st hoststore.HostStore, n int) time.Duration {
	g, err := st.AcquireFence(ctx, hoststore.Takeover)
	if err != nil {
		b.Fatal(err)
	}
	scope := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "bench"}
	head, row := make([]byte, 32), make([]byte, 64)
	batches := make([]*hoststore.CommitBatch, n)
	for i := range batches {
		u := hoststore.ScopeUpdate{Scope: scope, Next: hoststore.ScopeVersion(i + 1), Head: &head, Append: [][]byte{row}}
		if i > 0 {
			u.Previous = hoststore.Ptr(hoststore.ScopeVersion(i))
		}
		if batches[i], err = hoststore.NewCommitBatch(hoststore.CommitID(fmt.Sprintf("c%d", i)), g.Token, []hoststore.ScopeUpdate{u}); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for _, batch := range batches {
		if err := st.Commit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkCommit commits a small batch to the reference store over the
// protocol (a store process serving it, package serve) and reports the
// same loop in process beside it: inproc-ns/op, the ratio and the
// protocol's overhead per call.
func BenchmarkCommit(b *testing.B) {
	ctx := context.Background()
	b.Run("in-process", func(b *testing.B) {
		st, _ := reference.NewFactory().Open(ctx)
		b.ReportAllocs()
		b.ResetTimer()
		commitLoop(b, ctx, st, b.N)
	})
	b.Run("process", func(b *testing.B) {
		f, err := procstore.New([]string{os.Args[0]}, procstore.WithEnv(envChild+"=serve-reference"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		st, err := f.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer st.(*procstore.Store).Close()
		in, _ := reference.NewFactory().Open(ctx)
		b.StopTimer()
		inproc := commitLoop(b, ctx, in, b.N)
		b.ReportAllocs()
		b.StartTimer()
		proc := commitLoop(b, ctx, st, b.N)
		b.StopTimer()
		perIn, perProc := float64(inproc.Nanoseconds())/float64(b.N), float64(proc.Nanoseconds())/float64(b.N)
		b.ReportMetric(perIn, "inproc-ns/op")
		b.ReportMetric(perProc/perIn, "x-inproc")
		b.ReportMetric(perProc-perIn, "overhead-ns/op")
	})
}

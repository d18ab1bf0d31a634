package explore

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRunReference plays and judges histories against the reference
// store: one iteration is one history.
func BenchmarkRunReference(b *testing.B) {
	ops, start := 0, time.Now()
	for i := 0; b.Loop(); i++ {
		res, err := Run(context.Background(), referenceRealm, Config{Seed: uint64(i), Histories: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Failed) > 0 {
			b.Fatalf("the reference failed: %v", res.Failed[0].Findings)
		}
		ops += res.Ops
	}
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(ops)/secs, "ops/s")
	b.ReportMetric(float64(b.N)/secs, "histories/s")
}

// BenchmarkCheck judges recorded histories of the reference store; it
// reports the checker's cost per operation.
func BenchmarkCheck(b *testing.B) {
	var hs []*History
	ops := 0
	for i := range 32 {
		h, err := Play(context.Background(), mustRealm(b), HistorySeed(9, i), Config{})
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, h)
		ops += len(h.Events)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for _, h := range hs {
			if v := Check(h, CheckConfig{}); !v.OK() {
				b.Fatalf("the reference failed: %v", v.Findings)
			}
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*ops), "ns/op-checked")
}

func mustRealm(b *testing.B) hostFactory {
	f, err := referenceRealm()
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkShrink shrinks one finding of each canary: one iteration is
// one shrink, replays and checks included.
func BenchmarkShrink(b *testing.B) {
	for _, bug := range shrinkCanaries[:6] {
		b.Run(bug.String(), func(b *testing.B) {
			orig, _, _, _, _, _, _ := findShrunk(b, bug)
			var st ShrinkStats
			for b.Loop() {
				var err error
				_, st, err = Shrink(context.Background(), canaryRealm(bug), orig, ShrinkConfig{})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Replays), "replays")
			b.ReportMetric(float64(st.From), "events-from")
			b.ReportMetric(float64(st.To), "events-to")
		})
	}
}

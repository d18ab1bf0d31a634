package explore

import (
	"context"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/canary"
)

func TestShrinkScratch(t *testing.T) {
	for _, bug := range []canary.Bugs{canary.TornBatch, canary.LostOnKill, canary.IgnoreToken, canary.ReversedAppend, canary.RetryTwice, canary.LastWriterWins} {
		res, err := Run(context.Background(), canaryRealm(bug), Config{Seed: 3, Histories: 1000, StopAtFirst: true})
		if err != nil || len(res.Failed) == 0 {
			t.Fatal(bug, err)
		}
		f := res.Failed[0]
		start := time.Now()
		g, st, err := Shrink(context.Background(), canaryRealm(bug), f, ShrinkConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v in %s\n%v\n%s", bug, st, time.Since(start), g.Findings, g.History.Text())
	}
}

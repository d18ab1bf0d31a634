package explore

import (
	"context"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// waitingLapse is the reference store lapsing its leases as a store on a
// real clock does: by waiting, here 100 ms (its lease is 3 s).
type waitingLapse struct{ hoststore.HostStoreFactory }

func (w waitingLapse) LapseFenceLeases(ctx context.Context) error {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return w.HostStoreFactory.LapseFenceLeases(ctx)
}

// TestLapseByWaitingIsNoHang: a lapse may take as long as the store's
// lease, and a history may lapse more often than its time bound allows
// for. Histories over a store that waits 100 ms in each lapse, under a
// 10 ms call bound and a 150 ms history bound, play to the end: no hang,
// every lapse returned, and the history passes its check; two of them
// have a process lapse twice. Replaying those does the same.
func TestLapseByWaitingIsNoHang(t *testing.T) {
	timing, err := hoststore.NewFenceTiming(time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{MaxOps: 60, HistoryTimeout: 150 * time.Millisecond, CallBound: func(op Op) time.Duration {
		if op == OpLapse {
			return 10 * time.Millisecond
		}
		return 10 * time.Second
	}}
	newRealm := func() hoststore.HostStoreFactory {
		return waitingLapse{reference.NewFactory(reference.WithTiming(timing))}
	}
	found := 0
	for i := 0; found < 2 && i < 100; i++ {
		h, err := Play(context.Background(), newRealm(), HistorySeed(19, i), cfg)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, h *History) {
			t.Helper()
			if h.Hang != nil {
				t.Fatalf("%s of history %d: a lapse by waiting is called a hang: %+v", what, i, h.Hang)
			}
			for _, e := range h.Events {
				if e.Op == OpLapse && (!e.Returned() || e.Err != "") {
					t.Fatalf("%s of history %d: lapse #%d returned %v, error %q (the history's bound ended it)", what, i, e.ID, e.Returned(), e.Err)
				}
			}
			if v := Check(h, CheckConfig{}); len(v.Findings) > 0 {
				t.Fatalf("%s of history %d: %v", what, i, v.Findings)
			}
		}
		check("play", h)
		if mostLapsesOfOneProc(h) < 2 {
			continue
		}
		// Two lapses one after another take 200 ms, past the 150 ms
		// bound the history started with.
		found++
		again, err := Replay(context.Background(), newRealm(), h, Config{HistoryTimeout: 150 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		check("replay", again)
	}
	if found < 2 {
		t.Fatalf("%d of 100 histories had one process lapse twice, want 2", found)
	}
}

// mostLapsesOfOneProc returns the most lapses one process of h made.
func mostLapsesOfOneProc(h *History) int {
	by := map[int]int{}
	most := 0
	for _, e := range h.Events {
		if e.Op == OpLapse {
			by[e.Proc]++
			most = max(most, by[e.Proc])
		}
	}
	return most
}

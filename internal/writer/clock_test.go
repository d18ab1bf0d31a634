package writer

import (
	"context"
	"testing"
	"time"
)

func TestManualClockFiresTimersAtTheirDeadlines(t *testing.T) {
	c := NewManualClock()
	var got []time.Duration
	record := func() { got = append(got, c.Since(ManualEpoch)) }
	c.AfterFunc(3*time.Second, record)
	c.AfterFunc(time.Second, func() {
		record()
		c.AfterFunc(time.Second, record) // set by a timer: fires in the same move at 2 s
	})
	stopped := c.AfterFunc(2*time.Second, record)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer answered false")
	}
	if stopped.Stop() {
		t.Fatal("a second Stop answered true")
	}
	c.Advance(5 * time.Second)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("timers fired at %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("timers fired at %v, want %v", got, want)
		}
	}
	if d := c.Since(ManualEpoch); d != 5*time.Second {
		t.Fatalf("clock at %s after Advance(5s), want 5s", d)
	}
	if c.Pending() != 0 {
		t.Fatalf("%d timers pending, want 0", c.Pending())
	}
}

func TestManualClockTiesFireInTheOrderSet(t *testing.T) {
	c := NewManualClock()
	var got []int
	for i := range 4 {
		c.AfterFunc(time.Second, func() { got = append(got, i) })
	}
	c.Advance(time.Second)
	for i, v := range got {
		if v != i {
			t.Fatalf("ties fired in order %v, want 0 1 2 3", got)
		}
	}
}

func TestManualClockPauseFiresLate(t *testing.T) {
	c := NewManualClock()
	var at time.Duration
	c.AfterFunc(time.Second, func() { at = c.Since(ManualEpoch) })
	c.Pause(10 * time.Second)
	if at != 10*time.Second {
		t.Fatalf("a timer passed by a pause fired at %s, want 10s (late, after the jump)", at)
	}
}

func TestManualClockSleepPassesTime(t *testing.T) {
	c := NewManualClock()
	fired := false
	c.AfterFunc(time.Minute, func() { fired = true })
	if err := c.Sleep(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if !fired || c.Since(ManualEpoch) != time.Minute {
		t.Fatalf("after Sleep(1m): fired %v, clock +%s", fired, c.Since(ManualEpoch))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil || c.Since(ManualEpoch) != time.Minute {
		t.Fatalf("Sleep on an ended context = %v and moved the clock to +%s", err, c.Since(ManualEpoch))
	}
}

func TestManualClockNeverMovesBack(t *testing.T) {
	c := NewManualClock()
	for _, f := range []func(){func() { c.Advance(-1) }, func() { c.Pause(-1) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a negative move did not panic")
				}
			}()
			f()
		}()
	}
}

func TestSystemClockSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SystemClock().Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
	if err := SystemClock().Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v", err)
	}
	done := make(chan struct{})
	tm := SystemClock().AfterFunc(0, func() { close(done) })
	<-done
	if tm.Stop() {
		t.Fatal("Stop after the function ran answered true")
	}
}

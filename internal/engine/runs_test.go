package engine_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter/host"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// recordingTB is a testing.TB that records a failure instead of failing
// its test, so that a test can check that a run failed it.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprint(args...))
}

func (r *recordingTB) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }

func (r *recordingTB) Fail() { r.Error("Fail") }

func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}

// TestRunThreeTimes runs the host store chapter three times in one test
// binary: over the reference store, over the ignore-token canary, and over
// the reference store again. Each run must stand alone: the canary fails
// exactly its rows (checkCanary) and fails its test; both reference runs
// pass with the same row statuses; and after each run no failpoint is
// armed, no warning is carried over and the goroutines are back.
func TestRunThreeTimes(t *testing.T) {
	if os.Getenv(envCanary) != "" {
		t.Skip("a child process runs only TestCanaryChild")
	}
	goroutines := runtime.NumGoroutine()
	opts := func(store string) []engine.Option {
		return []engine.Option{engine.WithReportDir(t.TempDir()), engine.WithSeed(canarySeed),
			engine.WithStore(store), engine.WithLabelFilter(host.ID.Label())}
	}
	ref := func(context.Context) (hoststore.HostStoreFactory, error) { return reference.NewFactory(), nil }
	after := func(name string, run *reports.Run) {
		t.Helper()
		if run == nil {
			t.Fatalf("%s: no report model", name)
		}
		if n := faults.ArmedAnywhere(); n != 0 {
			t.Errorf("%s: %d failpoints still armed after the run", name, n)
		}
		if len(run.Warnings) > 0 {
			t.Errorf("%s: warnings %v", name, run.Warnings)
		}
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > goroutines+5 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > goroutines+5 {
			t.Errorf("%s: %d goroutines after the run, %d before the first", name, n, goroutines)
		}
	}

	first := engine.Run(t, ref, opts("reference:")...)
	after("first reference run", first)

	var c canaryCase
	for _, cc := range canaryCases {
		if cc.bugs == "ignore-token" {
			c = cc
		}
	}
	bugs, err := canary.Parse(c.bugs)
	if err != nil {
		t.Fatal(err)
	}
	var broken *reports.Run
	t.Run(c.bugs, func(t *testing.T) {
		rec := &recordingTB{TB: t}
		broken = engine.RunTB(rec, func(context.Context) (hoststore.HostStoreFactory, error) {
			return canary.NewFactory(bugs), nil
		}, opts("canary:"+c.bugs)...)
		if !rec.Failed() {
			t.Error("the canary's run did not fail its test")
		}
		checkCanary(t, c, broken)
	})
	after("canary run", broken)

	third := engine.Run(t, ref, opts("reference:")...)
	after("second reference run", third)

	for _, run := range []*reports.Run{first, third} {
		if run.Verdict() != reports.VerdictConformant {
			t.Errorf("a reference run is not conformant: %v", run.Reasons())
		}
	}
	if len(first.Rows) != len(third.Rows) {
		t.Fatalf("the reference runs have %d and %d rows", len(first.Rows), len(third.Rows))
	}
	for i, a := range first.Rows {
		if b := third.Rows[i]; a.ID != b.ID || a.Status != b.Status || a.NotSelected != b.NotSelected {
			t.Errorf("row %s: %s (not selected %v) in the first reference run, row %s: %s (%v) in the second", a.ID, a.Status, a.NotSelected, b.ID, b.Status, b.NotSelected)
		}
	}
	if first == third || first.Start.Equal(third.Start) {
		t.Error("the two reference runs share their report model")
	}
}

// TestTwoRunsAtOnce runs the host store chapter twice at once in one
// process: over the reference store and over the torn-batch canary,
// whose failing rows (kill, takeover) hold and crash its commits inside
// the store. Each run has its own injector, so the holds of one never
// take the other's commits: the canary fails exactly its rows and its
// test, the reference run passes, and nothing is armed after both.
func TestTwoRunsAtOnce(t *testing.T) {
	if os.Getenv(envCanary) != "" {
		t.Skip("a child process runs only TestCanaryChild")
	}
	var c canaryCase
	for _, cc := range canaryCases {
		if cc.bugs == "torn-batch" {
			c = cc
		}
	}
	bugs, err := canary.Parse(c.bugs)
	if err != nil {
		t.Fatal(err)
	}
	opts := func(store string) []engine.Option {
		return []engine.Option{engine.WithReportDir(t.TempDir()), engine.WithSeed(canarySeed),
			engine.WithStore(store), engine.WithLabelFilter(host.ID.Label()), engine.WithProgress(io.Discard)}
	}
	var (
		wg            sync.WaitGroup
		ref, broken   *reports.Run
		refTB, brokTB = &recordingTB{TB: t}, &recordingTB{TB: t}
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		ref = engine.RunTB(refTB, func(context.Context) (hoststore.HostStoreFactory, error) {
			return reference.NewFactory(), nil
		}, opts("reference:")...)
	}()
	go func() {
		defer wg.Done()
		broken = engine.RunTB(brokTB, func(context.Context) (hoststore.HostStoreFactory, error) {
			return canary.NewFactory(bugs), nil
		}, opts("canary:"+c.bugs)...)
	}()
	wg.Wait()
	if ref == nil || broken == nil {
		t.Fatalf("a run has no report model: reference %v, canary %v", ref != nil, broken != nil)
	}
	if refTB.Failed() || ref.Verdict() != reports.VerdictConformant {
		t.Errorf("the reference run beside the canary's is %s: %v %v", ref.Verdict().Label(), ref.Reasons(), refTB.errors)
	}
	for _, row := range ref.Rows {
		if row.Chapter == host.ID && !row.Certified() {
			t.Errorf("reference row %s: %s%v", row.ID, row.Status, row.Failures)
		}
	}
	if !brokTB.Failed() {
		t.Error("the canary's run did not fail its test")
	}
	checkCanary(t, c, broken)
	if n := faults.ArmedAnywhere(); n != 0 {
		t.Errorf("%d failpoints still armed after both runs", n)
	}
}

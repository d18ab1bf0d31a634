package harness_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// newRealm stands for a store author's own: each call makes a fresh,
// empty realm. The examples use the reference store.
func newRealm(context.Context) (hoststore.HostStoreFactory, error) {
	return reference.NewFactory(), nil
}

// The examples that take a t are the body of a store's TestConform, the
// `go test` that certifies it. Each harness.Run is a run of its own.

func ExampleRun() {
	var t *testing.T // TestConform's t
	harness.Run(t, newRealm, harness.WithStore("mystore"))
}

// A store author's suite that wants more than "no row failed" takes the
// report model and asks its verdict.
func ExampleRun_verdict() {
	var t *testing.T // TestConform's t
	run := harness.Run(t, newRealm, harness.WithStore("mystore"))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

// In the store's own Ginkgo suite, Register is called once at package
// level, in a suite file: `var _ = harness.Register(newRealm, ...)`. The
// suite's RunSpecs then runs the chapters beside the author's own specs.
func ExampleRegister() {
	_ = harness.Register(newRealm, harness.WithStore("mystore"))
}

// A store's own `conform` command: its openers by URL scheme, a default
// store and, if it likes, subcommands of its own.
func ExampleCommand_Main() {
	open := func(_ context.Context, url string) (harness.NewRealm, error) {
		return newRealm, nil // a real opener reads url
	}
	harness.Command{
		Openers: map[string]harness.Opener{"mystore": open},
		Default: "mystore:",
	}.Main()
}

func ExampleWithSeed() {
	var t *testing.T // TestConform's t
	// The same random choices on every run; CONFORM_SEED, when set, ranks
	// above it.
	harness.Run(t, newRealm, harness.WithSeed(42))
}

func ExampleWithRowTimeout() {
	var t *testing.T // TestConform's t
	// Rows whose own checks are slow on a small CI machine: the harness's
	// own time in each spec may reach five minutes. (A slow store needs no
	// option: its calls are bounded by its own latency.)
	harness.Run(t, newRealm, harness.WithRowTimeout(5*time.Minute))
}

func ExampleWithCallTimeout() {
	var t *testing.T // TestConform's t
	// A store whose calls may take up to a minute now and then (a cold
	// cache behind a slow network): no call is a hang before that.
	harness.Run(t, newRealm, harness.WithCallTimeout(time.Minute))
}

func ExampleWithReportDir() {
	var t *testing.T // TestConform's t
	// The reports go to a temporary directory, unless CONFORM_REPORT_DIR
	// (as in CI) says where to keep them: it ranks above this option.
	harness.Run(t, newRealm, harness.WithReportDir(t.TempDir()))
}

func ExampleWithLabelFilter() {
	var t *testing.T // TestConform's t
	// Only the host store chapter; CONFORM_LABEL_FILTER or CONFORM_REPRO,
	// when set, ranks above it.
	harness.Run(t, newRealm, harness.WithLabelFilter("chapter:host-store"))
}

func ExampleWithFailpoints() {
	var t *testing.T // TestConform's t
	// Every commit waits 20 ms at the in-store site commit-locked.
	harness.Run(t, newRealm, harness.WithFailpoints("commit-locked=sleep(20)"))
}

func ExampleWithStore() {
	var t *testing.T // TestConform's t
	// The name the reports and the repro lines give the store.
	harness.Run(t, newRealm, harness.WithStore("mystore"))
}

func ExampleWithProgress() {
	var t *testing.T // TestConform's t
	// One line per row as it ends, and a summary.
	harness.Run(t, newRealm, harness.WithProgress(os.Stderr))
}

// Two configurations of one store in one test binary: each Run is a run
// of its own, with its own realms, injector and reports.
func ExampleRun_twoConfigurations() {
	var t *testing.T // TestConform's t
	for _, mode := range []string{"wal", "rollback"} {
		t.Run(mode, func(t *testing.T) {
			harness.Run(t, newRealm, harness.WithStore("mystore:"+mode), harness.WithReportDir("conform-report-"+mode))
		})
	}
}

package engine_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// newRealm stands for a store author's own: each call makes a fresh,
// empty realm. The examples use the reference store.
func newRealm(context.Context) (hoststore.HostStoreFactory, error) {
	return reference.NewFactory(), nil
}

// The examples that take a t are the body of a store's TestConform, the
// `go test` that certifies it. Each engine.Run is a run of its own.

func ExampleRun() {
	var t *testing.T // TestConform's t
	engine.Run(t, newRealm, engine.WithStore("mystore"))
}

// A store author's suite that wants more than "no row failed" takes the
// report model and asks its verdict.
func ExampleRun_verdict() {
	var t *testing.T // TestConform's t
	run := engine.Run(t, newRealm, engine.WithStore("mystore"))
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
// level, in a suite file: `var _ = engine.Register(newRealm, ...)`. The
// suite's RunSpecs then runs the chapters beside the author's own specs.
func ExampleRegister() {
	var run *reports.Run
	_ = engine.Register(newRealm, engine.WithStore("mystore"), engine.WithResult(&run))
}

// A tool of its own (not `go test`) runs the chapters with RunBinary and
// judges the model it returns. CONFORM_* variables are not read: the tool
// maps them onto its own interface, as Command does.
func ExampleRunBinary() {
	run, err := engine.RunBinary(newRealm,
		engine.WithStore("mystore"), engine.WithReportDir("conform-report"), engine.WithProgress(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Verdict())
}

// A store's own `conform` command: its openers by URL scheme, a default
// store and, if it likes, subcommands of its own.
func ExampleCommand_Main() {
	open := func(_ context.Context, url string) (engine.NewRealm, error) {
		return newRealm, nil // a real opener reads url
	}
	engine.Command{
		Openers: map[string]engine.Opener{"mystore": open},
		Default: "mystore:",
	}.Main()
}

// Command.Run is Main without the exit: a test of the command, or a
// wrapper, calls it with its own writers and gets the exit code.
func ExampleCommand_Run() {
	c := engine.Command{
		Default: "mystore:",
		Extra: map[string]func(args []string, stdout, stderr io.Writer) int{
			"greet": func(args []string, stdout, _ io.Writer) int {
				fmt.Fprintln(stdout, "hello,", args[0])
				return 0
			},
		},
	}
	code := c.Run([]string{"greet", "store author"}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	code = c.Run([]string{"frobnicate"}, io.Discard, io.Discard)
	fmt.Println("exit", code)
	// Output:
	// hello, store author
	// exit 0
	// exit 2
}

func ExampleWithSeed() {
	var t *testing.T // TestConform's t
	// The same random choices on every run; CONFORM_SEED, when set, ranks
	// above it.
	engine.Run(t, newRealm, engine.WithSeed(42))
}

func ExampleWithRowTimeout() {
	var t *testing.T // TestConform's t
	// Rows whose own checks are slow on a small CI machine: the harness's
	// own time in each spec may reach five minutes. (A slow store needs no
	// option: its calls are bounded by its own latency.)
	engine.Run(t, newRealm, engine.WithRowTimeout(5*time.Minute))
}

func ExampleWithCallTimeout() {
	var t *testing.T // TestConform's t
	// A store whose calls may take up to a minute now and then (a cold
	// cache behind a slow network): no call is a hang before that.
	engine.Run(t, newRealm, engine.WithCallTimeout(time.Minute))
}

func ExampleWithSettle() {
	var t *testing.T // TestConform's t
	// A store whose takeover waits on a lock timeout of its database.
	engine.Run(t, newRealm, engine.WithSettle(10*time.Second))
}

func ExampleWithReportDir() {
	var t *testing.T // TestConform's t
	// The reports go to a temporary directory, unless CONFORM_REPORT_DIR
	// (as in CI) says where to keep them: it ranks above this option.
	engine.Run(t, newRealm, engine.WithReportDir(t.TempDir()))
}

func ExampleWithLabelFilter() {
	var t *testing.T // TestConform's t
	// Only the host store chapter; CONFORM_LABEL_FILTER or CONFORM_REPRO,
	// when set, ranks above it.
	engine.Run(t, newRealm, engine.WithLabelFilter("chapter:host-store"))
}

func ExampleWithFailpoints() {
	var t *testing.T // TestConform's t
	// Every commit waits 20 ms at the in-store site commit-locked.
	engine.Run(t, newRealm, engine.WithFailpoints("commit-locked=sleep(20)"))
}

func ExampleWithStore() {
	var t *testing.T // TestConform's t
	// The name the reports and the repro lines give the store.
	engine.Run(t, newRealm, engine.WithStore("mystore"))
}

func ExampleWithProgress() {
	var t *testing.T // TestConform's t
	// One line per row as it ends, and a summary.
	engine.Run(t, newRealm, engine.WithProgress(os.Stderr))
}

func ExampleWithResult() {
	var t *testing.T // TestConform's t
	var run *reports.Run
	engine.Run(t, newRealm, engine.WithResult(&run))
	if run == nil || run.Verdict() != reports.VerdictConformant {
		t.Errorf("mystore is not certified")
	}
}

// A repro kept in code, for a test that pins one failure. Without editing
// any code, CONFORM_REPRO set to the same string does the same.
func ExampleWithRepro() {
	var t *testing.T // a test's t
	r, err := engine.ParseRepro("v1;seed=42;row=kill")
	if err != nil {
		t.Fatal(err)
	}
	engine.Run(t, newRealm, engine.WithRepro(r))
}

func ExampleParseRepro() {
	r, err := engine.ParseRepro("v1;seed=42;row=kill;fp=commit-locked%3Dsleep%2820%29")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Seed, r.Row, r.Failpoints)
	_, err = engine.ParseRepro("v1;row=kill")
	fmt.Println(err)
	// Output:
	// 42 kill [commit-locked=sleep(20)]
	// repro "v1;row=kill": no seed
}

func ExampleRepro_String() {
	r := engine.Repro{Seed: 42, Row: "kill", Failpoints: []string{"commit-locked=sleep(20)"}, Store: "reference:"}
	fmt.Println(r)
	// Output:
	// v1;seed=42;row=kill;fp=commit-locked%3Dsleep%2820%29;store=reference%3A
}

func ExampleReproLine() {
	fmt.Println(engine.ReproLine(engine.Repro{Seed: 42, Row: "kill"}))
	// Output:
	// conform reproduce 'v1;seed=42;row=kill'   (under go test: CONFORM_REPRO='v1;seed=42;row=kill' go test ./...)
}

func ExampleValidateLabelFilter() {
	fmt.Println(engine.ValidateLabelFilter("row:kill || ob:5"))
	fmt.Println(engine.ValidateLabelFilter("row:kill &&") != nil)
	// Output:
	// <nil>
	// true
}

// A CI step reads back the report a run left and judges it.
func ExampleReadReport() {
	dir, err := os.MkdirTemp("", "conform-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A run leaves its reports in dir; this one stands in for it.
	if err := reports.WriteAll(dir, &reports.Run{Tool: "conform", Store: "mystore", Seed: 42,
		Rows: []reports.Row{{Chapter: "host-store", ID: "kill", Status: reports.StatusPassed}}}); err != nil {
		log.Fatal(err)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Store, run.Seed, run.Verdict())
	// Output:
	// mystore 42 conformant
}

package engine_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter/host"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reference"
)

// The environment through which TestCanaries tells a child what to run.
const (
	// envCanary names the store a child runs the chapter over: a canary's
	// bugs as canary.Parse reads them ("correct" for none), or
	// "reference" for the reference store.
	envCanary = "CONFORM_CANARY"
	// envCanaryDir is where the child writes its reports.
	envCanaryDir = "CONFORM_CANARY_DIR"
	// envCanarySeed is the child's seed.
	envCanarySeed = "CONFORM_CANARY_SEED"
	// envCanaryRowTimeout is the child's row timeout, as time.ParseDuration
	// reads it ("" for the harness's default).
	envCanaryRowTimeout = "CONFORM_CANARY_ROW_TIMEOUT"
	// envCanarySettle is the child's settle bound (engine.WithSettle), as
	// time.ParseDuration reads it ("" for the default).
	envCanarySettle = "CONFORM_CANARY_SETTLE"
)

// referenceName is the envCanary value that runs the reference store.
const referenceName = "reference"

// TestCanaryChild runs the host store chapter (only: the label filter
// leaves other chapters out) over the store envCanary names and
// writes the reports to envCanaryDir. It runs only as a child process of
// TestCanaries, which keeps each canary in a process of its own, and is
// skipped otherwise. Failing rows make it fail, as engine.Run does for any store
// that is not conformant; the parent judges the report, not the exit code.
func TestCanaryChild(t *testing.T) {
	name := os.Getenv(envCanary)
	if name == "" {
		t.Skip("a child of TestCanaries: runs only with " + envCanary + " set")
	}
	newRealm := func(context.Context) (hoststore.HostStoreFactory, error) {
		return reference.NewFactory(), nil
	}
	if name != referenceName {
		bugs, err := canary.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		newRealm = func(context.Context) (hoststore.HostStoreFactory, error) {
			return canary.NewFactory(bugs), nil
		}
	}
	dir := os.Getenv(envCanaryDir)
	if dir == "" {
		t.Fatal(envCanaryDir + " is not set")
	}
	seed, err := strconv.ParseUint(os.Getenv(envCanarySeed), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", envCanarySeed, err)
	}
	opts := []engine.Option{
		engine.WithReportDir(dir), engine.WithSeed(seed), engine.WithStore("canary:" + name),
		engine.WithLabelFilter(host.ID.Label()),
	}
	if s := os.Getenv(envCanaryRowTimeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: %v", envCanaryRowTimeout, err)
		}
		opts = append(opts, engine.WithRowTimeout(d))
	}
	if s := os.Getenv(envCanarySettle); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: %v", envCanarySettle, err)
		}
		opts = append(opts, engine.WithSettle(d))
	}
	engine.Run(t, newRealm, opts...)
}

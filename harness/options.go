// Package harness runs conform's chapters over a store and writes the
// reports. A store author calls Run from a plain `go test`, Register from
// their own Ginkgo suite, or Main to build a `conform` command of their own
// around their store.
package harness

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"
)

// Version is conform's version, written into every report.
const Version = "0.1.0"

// NewRealm makes a fresh realm, which starts empty. Each chapter run gets
// its own.
type NewRealm func(ctx context.Context) (hoststore.HostStoreFactory, error)

// Options configure a run. Every zero value is usable: a random seed (kept
// in the report and the repro line), 60 s per spec, reports in
// ./conform-report, no label filter, no failpoints.
type Options struct {
	// Seed drives every random choice; 0 draws one at random.
	Seed uint64
	// RowTimeout bounds each spec of a row; 0 means 60 s.
	RowTimeout time.Duration
	// ReportDir is where the four reports go; "" means "conform-report";
	// "-" writes none.
	ReportDir string
	// LabelFilter selects rows by Ginkgo label expression, e.g.
	// "row:stale-fence || ob:5".
	LabelFilter string
	// Failpoints are "name=terms" pairs armed for the whole run (see
	// faults.Catalogue).
	Failpoints []string
	// Store names the store in reports and repro lines (e.g. its URL).
	Store string
	// Progress, when set, gets one line per spec as it ends and a summary;
	// Ginkgo's own output is then silenced.
	Progress io.Writer
	// Settle bounds how long a row waits on something a correct store may
	// legitimately wait for (a takeover behind a held commit) before it
	// judges the other order, and (×10, at most a third of RowTimeout) how
	// long the independence rows wait before they call a stall; 0 means 2 s.
	Settle time.Duration
	// Result, when set, receives the run's report model after the run.
	Result **reports.Run
}

// Option sets one field of Options.
type Option func(*Options)

// WithSeed fixes the seed.
func WithSeed(seed uint64) Option { return func(o *Options) { o.Seed = seed } }

// WithRowTimeout bounds each spec.
func WithRowTimeout(d time.Duration) Option { return func(o *Options) { o.RowTimeout = d } }

// WithReportDir sets where the reports go ("-": nowhere).
func WithReportDir(dir string) Option { return func(o *Options) { o.ReportDir = dir } }

// WithLabelFilter selects rows by label expression.
func WithLabelFilter(f string) Option { return func(o *Options) { o.LabelFilter = f } }

// WithFailpoints arms "name=terms" failpoints for the run.
func WithFailpoints(fps ...string) Option {
	return func(o *Options) { o.Failpoints = append(o.Failpoints, fps...) }
}

// WithStore names the store in the reports.
func WithStore(name string) Option { return func(o *Options) { o.Store = name } }

// WithProgress prints live lines to w instead of Ginkgo's output.
func WithProgress(w io.Writer) Option { return func(o *Options) { o.Progress = w } }

// WithRepro runs exactly what a repro names: its seed, its row, its
// failpoints.
func WithRepro(r Repro) Option {
	return func(o *Options) {
		o.Seed = r.Seed
		if r.Row != "" {
			o.LabelFilter = "row:" + r.Row
		}
		o.Failpoints = append([]string(nil), r.Failpoints...)
		if r.Store != "" {
			o.Store = r.Store
		}
	}
}

// WithSettle sets Options.Settle.
func WithSettle(d time.Duration) Option { return func(o *Options) { o.Settle = d } }

// WithResult stores the run's report model in *dst once the run ended.
func WithResult(dst **reports.Run) Option { return func(o *Options) { o.Result = dst } }

// Environment variables a `go test` run reads, so that a failure's repro
// line works without editing the test.
const (
	EnvRepro     = "CONFORM_REPRO"
	EnvSeed      = "CONFORM_SEED"
	EnvReportDir = "CONFORM_REPORT_DIR"
	EnvLabels    = "CONFORM_LABEL_FILTER"
)

// resolve applies opts over the environment's settings.
func resolve(opts []Option) (Options, error) {
	var o Options
	if s := os.Getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return o, fmt.Errorf("%s=%q is not a number", EnvSeed, s)
		}
		o.Seed = n
	}
	o.ReportDir = os.Getenv(EnvReportDir)
	o.LabelFilter = os.Getenv(EnvLabels)
	for _, f := range opts {
		f(&o)
	}
	if s := os.Getenv(EnvRepro); s != "" {
		r, err := ParseRepro(s)
		if err != nil {
			return o, fmt.Errorf("%s: %v", EnvRepro, err)
		}
		WithRepro(r)(&o)
	}
	if o.Seed == 0 {
		seed, err := drawSeed()
		if err != nil {
			return o, err
		}
		o.Seed = seed
	}
	if o.ReportDir == "" {
		o.ReportDir = "conform-report"
	}
	return o, nil
}

// drawSeed draws a non-zero seed at random.
func drawSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("drawing a seed: %v", err)
	}
	return binary.LittleEndian.Uint64(b[:])>>1 | 1, nil
}

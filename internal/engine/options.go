package engine

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reports"
)

// Version is conform's version, written into every report.
const Version = "0.1.0"

// NewRealm makes a fresh realm, which starts empty. Each chapter run gets
// its own.
type NewRealm func(ctx context.Context) (hoststore.HostStoreFactory, error)

// Options configure a run (see settings.Options). Under `go test` (Run,
// Register) a CONFORM_* variable that is set ranks above the option it
// matches; see the package doc.
type Options = settings.Options

// ExploreStatus is the exploration chapter's progress after a history:
// histories judged (of the budget), operations, coverage items reached
// (of those listed), histories failed, and the headline of the history
// just judged when it failed.
type ExploreStatus = settings.ExploreStatus

// DefaultExploreHistories is the exploration chapter's budget unless an
// option or CONFORM_EXPLORE_HISTORIES sets another: 300 histories of at
// most 200 operations each, which the reference store plays and the
// checker judges in under a second (the SQLite, append-only and
// PostgreSQL stores take 7 to 15 s).
const DefaultExploreHistories = settings.DefaultExploreHistories

// WithExplore sets the exploration chapter's budget to histories
// histories (0 or less: DefaultExploreHistories). The chapter runs by
// default; WithoutExplore leaves it out.
func WithExplore(histories int) Option {
	return func(o *Options) {
		if histories <= 0 {
			histories = 0
		}
		o.Explore = histories
	}
}

// WithoutExplore leaves the exploration chapter out: its row is not
// selected, and the verdict rests on the scripted chapters alone.
func WithoutExplore() Option {
	return func(o *Options) { o.Explore = -1 }
}

// MaxExploreParallel is the most exploration histories that may play at
// once.
const MaxExploreParallel = 64

// WithExploreParallel plays n exploration histories at once, each over a
// realm of its own (at most MaxExploreParallel; 0 or 1: one at a time).
// It speeds up a store whose calls wait on a network or a disk. The
// histories and their verdicts stay the same: each is generated from its
// own seed and judged alone, in order. newRealm and the realms' Close are
// still called one at a time, but the realms live side by side: a store
// whose realms share a clock, so that LapseFenceLeases on one lapses the
// leases of another, must keep to one at a time.
func WithExploreParallel(n int) Option {
	return func(o *Options) { o.ExploreParallel = min(max(n, 0), MaxExploreParallel) }
}

// WithExploreProgress gives f the exploration chapter's progress after
// each history.
func WithExploreProgress(f func(ExploreStatus)) Option {
	return func(o *Options) { o.ExploreProgress = f }
}

// Option sets one field of Options.
type Option = settings.Option

// WithSeed fixes the seed.
func WithSeed(seed uint64) Option { return func(o *Options) { o.Seed = seed } }

// WithRowTimeout bounds the harness's own time in each spec (see
// Options.RowTimeout).
func WithRowTimeout(d time.Duration) Option { return func(o *Options) { o.RowTimeout = d } }

// WithCallTimeout fixes the per-call bound instead of deriving it from the
// store's latency (see Options.CallTimeout).
func WithCallTimeout(d time.Duration) Option { return func(o *Options) { o.CallTimeout = d } }

// The floors of the time bounds a run may set.
const (
	// MinRowTimeout is the least Options.RowTimeout (--timeout).
	MinRowTimeout = chapter.MinRowTimeout
	// MinCallTimeout is the least Options.CallTimeout (--call-timeout).
	MinCallTimeout = chapter.MinCallTimeout
)

// checkBounds refuses a row or call timeout that is negative or below its
// floor, naming the flag that sets it; zero is the default.
func checkBounds(row, call time.Duration) error {
	if row != 0 && row < MinRowTimeout {
		return fmt.Errorf("the row timeout (--timeout) %s is below its floor of %s", row, MinRowTimeout)
	}
	if call != 0 && call < MinCallTimeout {
		return fmt.Errorf("the call timeout (--call-timeout) %s is below its floor of %s", call, MinCallTimeout)
	}
	return nil
}

// parallelFlag defines --explore-parallel on fs, for run and explore.
func parallelFlag(fs *flag.FlagSet) *int {
	return fs.Int("explore-parallel", 1, fmt.Sprintf("how many exploration histories play at once, each over its own realm (1 to %d); more speed up a store whose calls wait on a network or disk, if its realms share no clock", MaxExploreParallel))
}

// checkParallel refuses a --explore-parallel outside 1 to
// MaxExploreParallel.
func checkParallel(n int) error {
	if n < 1 || n > MaxExploreParallel {
		return fmt.Errorf("--explore-parallel %d: give 1 to %d histories at once", n, MaxExploreParallel)
	}
	return nil
}

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
		if r.Hist != nil {
			o.ExploreHist = hoststore.Ptr(*r.Hist)
		}
		o.ExploreHistory = r.History
	}
}

// WithoutInStoreFaults declares that the store calls no in-store site
// (package instore). Without it, the parts of rows that need those sites
// are not exercised and the run is not conformant; with it, the run can be
// "conformant without in-store faults", and every report says so and lists
// what was not exercised.
func WithoutInStoreFaults() Option { return func(o *Options) { o.WithoutInStoreFaults = true } }

// WithKeepRealms keeps every chapter's realm after the run (see
// Options.KeepRealms).
func WithKeepRealms() Option { return func(o *Options) { o.KeepRealms = true } }

// checkFences refuses fences in a store's run, from opts or from repro
// (CONFORM_REPRO), and a fences run without them: a store's run certifies
// the store alone, and `conform fences` certifies fences.
func checkFences(o Options, repro *Repro) error {
	if repro != nil && fenceRepro(*repro) && !o.RunsFences {
		return fmt.Errorf("%s names a run of the fences (%s); run it with: conform reproduce '%s'", EnvRepro, repro.FencesName(), repro.String())
	}
	if !o.RunsFences {
		if o.Fences != "" || o.FencesDir != "" {
			return fmt.Errorf("a store's run certifies no fences (fences %q): 'conform fences' certifies them", o.Fences)
		}
		return nil
	}
	if o.Fences == "" {
		return fmt.Errorf("a fences run needs its fences: self or exec:PROGRAM ARGS")
	}
	_, err := settings.FencesCommand(o.Fences)
	return err
}

// WithSettle sets Options.Settle.
func WithSettle(d time.Duration) Option { return func(o *Options) { o.Settle = d } }

// WithResult stores the run's report model in *dst once the run ended.
func WithResult(dst **reports.Run) Option { return func(o *Options) { o.Result = dst } }

// The CONFORM_* environment variables (see settings.EnvRepro).
const (
	EnvRepro     = settings.EnvRepro
	EnvSeed      = settings.EnvSeed
	EnvReportDir = settings.EnvReportDir
	EnvLabels    = settings.EnvLabels
	EnvExplore   = settings.EnvExplore
)

// noEnv is the environment of a run that reads none (RunBinary).
func noEnv(string) string { return "" }

// resolveEnv returns a `go test` run's settings: opts under the CONFORM_*
// environment read through getenv, ranked by settings.Build, and checked:
// a store's run certifies no fences, and its bounds keep their floors.
func resolveEnv(opts []Option, getenv func(string) string) (settings.Settings, error) {
	e, err := settings.ReadEnv(getenv)
	if err != nil {
		return settings.Settings{}, err
	}
	s, err := settings.Build(settings.Input{Code: opts, Env: e})
	if err != nil {
		return s, err
	}
	if err := checkFences(s.Options, e.Repro); err != nil {
		return s, err
	}
	return s, checkBounds(s.RowTimeout, s.CallTimeout)
}

// resolve returns the Options of a `go test` run: opts under the CONFORM_*
// environment of this process (resolveEnv).
func resolve(opts []Option) (settings.Settings, error) {
	return resolveEnv(opts, os.Getenv)
}

package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/reports"
)

// Version is conform's version, written into every report.
const Version = "0.1.0"

// NewRealm makes a fresh realm, which starts empty. Each chapter run gets
// its own.
type NewRealm func(ctx context.Context) (hoststore.HostStoreFactory, error)

// Options configure a run. Every zero value is usable: a random seed (kept
// in the report and the repro line), 60 s of the harness's own time per
// spec, a per-call bound derived from the store's latency, reports in
// ./conform-report, no label filter, no failpoints. Under `go test` (Run,
// Register) a CONFORM_* variable that is set ranks above the option it
// matches; see the package doc.
type Options struct {
	// Seed drives every random choice; 0 draws one at random.
	Seed uint64
	// RowTimeout bounds the harness's own time in each spec of a row: the
	// time in which none of the spec's store calls is in flight; 0 means
	// 60 s, and it may not be below 1 s. The store's own time is bounded
	// call by call (CallTimeout), so a spec of many calls to a slow store
	// is not cut short.
	RowTimeout time.Duration
	// CallTimeout is how long one store call may take before it is
	// reported as a hang (a breach of the error contract, ob:errors). 0
	// derives it from the latency the store showed so far in the run: 10
	// times the 99th percentile of that operation's latencies, at least
	// 2 s and at most 30 s (30 s before the store answered any call). It
	// may not be below 100 ms. Time in which the harness holds or delays
	// a commit inside the store never counts, and LapseFenceLeases may
	// take the lease the store declares on top of it.
	CallTimeout time.Duration
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
	// judges the other order; 0 means 2 s. (The stall rows wait after the
	// store's own commit latency: 20 times its 99th percentile so far, at
	// least 1 s.)
	Settle time.Duration
	// Fences is the fence implementation that `conform fences` certifies
	// over the admission chapter: "self" for conform's own fences (served
	// by the running executable, which calls the helper's entry point
	// first, as Command.Main does), or "exec:PROGRAM ARGS" for a helper of
	// another implementation (docs/admission-helper-protocol.md; the
	// arguments are split at spaces). A store's run (Run, Register,
	// RunBinary) certifies no fences and refuses it set.
	Fences string
	// FencesDir is where the admission chapter makes its directories; it
	// must host fences. Empty: the system's temporary directory.
	FencesDir string
	// KeepRealms keeps every chapter's realm after the run. By default the
	// harness closes each realm's factory when its chapter ends, if the
	// factory implements io.Closer; a factory that made its realm for the
	// run removes it then (the stores here do).
	KeepRealms bool
	// WithoutInStoreFaults declares that the store calls no in-store site
	// (see the option of the same name).
	WithoutInStoreFaults bool
	// Result, when set, receives the run's report model after the run.
	Result **reports.Run
	// Explore is the exploration chapter's budget (label
	// chapter:explore) in histories: 0 takes DefaultExploreHistories, and
	// a negative number leaves the chapter out (WithoutExplore).
	Explore int
	// ExploreHist, when not nil, plays that one history of the
	// exploration chapter alone, as a repro's hist=N names it; it turns
	// the chapter on.
	ExploreHist *int
	// ExploreHistory, when not empty, is a shrunk history of the
	// exploration chapter, as a repro's history= carries it: the chapter
	// replays it exactly, twice, instead of regenerating ExploreHist.
	ExploreHistory string
	// ExploreParallel is how many exploration histories play at once
	// (WithExploreParallel); 0 or 1 plays one at a time.
	ExploreParallel int
	// ExploreProgress, when set, gets the exploration chapter's progress
	// after each history.
	ExploreProgress func(ExploreStatus)
	// Shard, when its Count is above 1, makes the run one shard of a
	// campaign (see WithShard); the zero Shard is the whole run.
	Shard reports.Shard
	// Ledger are failing exploration histories of earlier runs, replayed
	// before the budget (see WithLedger).
	Ledger []reports.LedgerEntry
	// exploreFor is the wall-time budget of `conform explore --budget`.
	exploreFor time.Duration
	// runsFences makes the run a fences run, over fenceChapters instead
	// of storeChapters (asFencesRun; see Options.chapters).
	runsFences bool
}

// ExploreStatus is the exploration chapter's progress after a history:
// histories judged (of the budget), operations, coverage items reached
// (of those listed), histories failed, and the headline of the history
// just judged when it failed.
type ExploreStatus = chapter.ExploreStatus

// DefaultExploreHistories is the exploration chapter's budget unless an
// option or CONFORM_EXPLORE_HISTORIES sets another: 300 histories of at
// most 200 operations each, which the reference store plays and the
// checker judges in under a second (the SQLite, append-only and
// PostgreSQL stores take 7 to 15 s).
const DefaultExploreHistories = explore.DefaultHistories

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

// exploreBudget returns the histories the exploration chapter plays: 0
// when it is left out.
func (o Options) exploreBudget() int {
	switch {
	case o.Explore < 0:
		return 0
	case o.Explore == 0:
		return DefaultExploreHistories
	}
	return o.Explore
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
type Option func(*Options)

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

// fencesCommand parses Options.Fences: nil for "", an empty command for
// "self", the program and its arguments for "exec:...".
func fencesCommand(s string) ([]string, error) {
	switch {
	case s == "":
		return nil, nil
	case s == "self":
		return []string{}, nil
	case strings.HasPrefix(s, "exec:"):
		if args := strings.Fields(strings.TrimPrefix(s, "exec:")); len(args) > 0 {
			return args, nil
		}
	}
	return nil, fmt.Errorf("fences %q: want self or exec:PROGRAM ARGS", s)
}

// checkFences refuses fences in a store's run, from opts or from repro
// (CONFORM_REPRO), and a fences run without them: a store's run certifies
// the store alone, and `conform fences` certifies fences.
func checkFences(o Options, repro *Repro) error {
	if repro != nil && repro.fenceRun() && !o.runsFences {
		return fmt.Errorf("%s names a run of the fences (%s); run it with: conform reproduce '%s'", EnvRepro, repro.fencesName(), repro.String())
	}
	if !o.runsFences {
		if o.Fences != "" || o.FencesDir != "" {
			return fmt.Errorf("a store's run certifies no fences (fences %q): 'conform fences' certifies them", o.Fences)
		}
		return nil
	}
	if o.Fences == "" {
		return fmt.Errorf("a fences run needs its fences: self or exec:PROGRAM ARGS")
	}
	_, err := fencesCommand(o.Fences)
	return err
}

// WithSettle sets Options.Settle.
func WithSettle(d time.Duration) Option { return func(o *Options) { o.Settle = d } }

// WithResult stores the run's report model in *dst once the run ended.
func WithResult(dst **reports.Run) Option { return func(o *Options) { o.Result = dst } }

// The CONFORM_* environment variables. Under `go test` (Run, Register)
// they are the user's run-time override and rank above code options; the
// command maps them onto its flags and refuses one that conflicts with a
// flag given (see the package doc).
const (
	// EnvRepro is a repro string (ParseRepro): its seed, its row (as the
	// label filter "row:ID") and its failpoints replace the run's.
	EnvRepro = "CONFORM_REPRO"
	// EnvSeed is the seed, in decimal; 0 draws one.
	EnvSeed = "CONFORM_SEED"
	// EnvReportDir is where the reports go.
	EnvReportDir = "CONFORM_REPORT_DIR"
	// EnvLabels is the label filter.
	EnvLabels = "CONFORM_LABEL_FILTER"
	// EnvExplore sets the exploration chapter's budget in histories, in
	// decimal (WithExplore); 0 leaves the chapter out (WithoutExplore).
	EnvExplore = "CONFORM_EXPLORE_HISTORIES"
)

// env is the CONFORM_* environment of a run, read and checked: a zero
// field is a variable not set.
type env struct {
	seed      uint64 // 0: not set, or set to 0 (draw one)
	reportDir string
	labels    string
	repro     *Repro
	explore   int // -1: not set; 0: the chapter left out
}

// readEnv reads the CONFORM_* variables through getenv. It refuses a
// malformed value, and CONFORM_SEED or CONFORM_LABEL_FILTER set beside
// CONFORM_REPRO to something else than the repro says, naming both.
func readEnv(getenv func(string) string) (env, error) {
	e := env{explore: -1}
	if s := getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return env{}, fmt.Errorf("%s=%q is not a number", EnvSeed, s)
		}
		e.seed = n
	}
	if s := getenv(EnvExplore); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return env{}, fmt.Errorf("%s=%q is not a number of histories", EnvExplore, s)
		}
		e.explore = n
	}
	e.reportDir = getenv(EnvReportDir)
	e.labels = getenv(EnvLabels)
	if s := getenv(EnvRepro); s != "" {
		r, err := ParseRepro(s)
		if err != nil {
			return env{}, fmt.Errorf("%s: %v", EnvRepro, err)
		}
		if e.seed != 0 && e.seed != r.Seed {
			return env{}, fmt.Errorf("%s=%d conflicts with %s (seed=%d)", EnvSeed, e.seed, EnvRepro, r.Seed)
		}
		if r.Row != "" && e.labels != "" && e.labels != "row:"+r.Row {
			return env{}, fmt.Errorf("%s=%q conflicts with %s (row=%s)", EnvLabels, e.labels, EnvRepro, r.Row)
		}
		e.repro = &r
	}
	return e, nil
}

// noEnv is the environment of a run that reads none (RunBinary).
func noEnv(string) string { return "" }

// Where a setting of a run came from, as the run's header shows it.
const (
	fromDefault = "default"
	fromCode    = "code"
	fromDrawn   = "drawn"
)

// settings are a run's effective Options and where the seed, the label
// filter, the failpoints and the report directory came from: fromDefault,
// fromCode, fromDrawn, or the name of a CONFORM_* variable.
type settings struct {
	Options
	seedFrom, labelsFrom, failpointsFrom, reportDirFrom string
}

// resolveEnv returns a `go test` run's settings: the zero Options, then
// opts in order, then the CONFORM_* environment read through getenv, each
// variable set replacing what the code said (CONFORM_REPRO last: it names
// the run exactly), then the defaults (a drawn seed, ./conform-report).
// The store's name stays the code's: a repro cannot change which store the
// test opens.
func resolveEnv(opts []Option, getenv func(string) string) (settings, error) {
	var s settings
	for _, f := range opts {
		f(&s.Options)
	}
	s.seedFrom, s.labelsFrom, s.failpointsFrom, s.reportDirFrom = fromDefault, fromDefault, fromDefault, fromDefault
	if s.Seed != 0 {
		s.seedFrom = fromCode
	}
	if s.LabelFilter != "" {
		s.labelsFrom = fromCode
	}
	if len(s.Failpoints) > 0 {
		s.failpointsFrom = fromCode
	}
	if s.ReportDir != "" {
		s.reportDirFrom = fromCode
	}
	e, err := readEnv(getenv)
	if err != nil {
		return s, err
	}
	if e.seed != 0 {
		s.Seed, s.seedFrom = e.seed, EnvSeed
	}
	if e.labels != "" {
		s.LabelFilter, s.labelsFrom = e.labels, EnvLabels
	}
	if e.reportDir != "" {
		s.ReportDir, s.reportDirFrom = e.reportDir, EnvReportDir
	}
	switch {
	case e.explore > 0:
		s.Explore = e.explore
	case e.explore == 0:
		s.Explore = -1
	}
	if r := e.repro; r != nil {
		s.Seed, s.seedFrom = r.Seed, EnvRepro
		if r.Row != "" {
			s.LabelFilter, s.labelsFrom = "row:"+r.Row, EnvRepro
		}
		s.Failpoints, s.failpointsFrom = append([]string(nil), r.Failpoints...), EnvRepro
		if r.Hist != nil {
			s.ExploreHist = hoststore.Ptr(*r.Hist)
		}
		s.ExploreHistory = r.History
	}
	if err := checkFences(s.Options, e.repro); err != nil {
		return s, err
	}
	if err := checkBounds(s.RowTimeout, s.CallTimeout); err != nil {
		return s, err
	}
	if s.Seed == 0 {
		seed, err := drawSeed()
		if err != nil {
			return s, err
		}
		s.Seed, s.seedFrom = seed, fromDrawn
	}
	if s.ReportDir == "" {
		s.ReportDir, s.reportDirFrom = "conform-report", fromDefault
	}
	return s, nil
}

// resolve returns the Options of a `go test` run: opts under the CONFORM_*
// environment of this process (resolveEnv).
func resolve(opts []Option) (Options, error) {
	s, err := resolveEnv(opts, os.Getenv)
	return s.Options, err
}

// header is the first line of a run: conform's version and every
// effective setting with where it came from.
func (s settings) header() string {
	store := s.Store
	if store == "" {
		store = "(unnamed)"
	}
	labels := "none"
	if s.LabelFilter != "" {
		labels = strconv.Quote(s.LabelFilter)
	}
	fps := "none"
	if len(s.Failpoints) > 0 {
		fps = strings.Join(s.Failpoints, " ")
	}
	explore := "left out"
	switch {
	case s.ExploreHistory != "":
		explore = "a shrunk history, replayed twice"
	case s.ExploreHist != nil:
		explore = fmt.Sprintf("history %d alone", *s.ExploreHist)
	case s.exploreBudget() > 0:
		explore = fmt.Sprintf("%d histories", s.exploreBudget())
	}
	return fmt.Sprintf("conform %s: store %s; seed %d (%s); label filter %s (%s); failpoints %s (%s); exploration %s; reports in %s (%s)",
		Version, store, s.Seed, s.seedFrom, labels, s.labelsFrom, fps, s.failpointsFrom, explore, s.ReportDir, s.reportDirFrom)
}

// drawSeed draws a non-zero seed at random.
func drawSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("drawing a seed: %v", err)
	}
	return binary.LittleEndian.Uint64(b[:])>>1 | 1, nil
}

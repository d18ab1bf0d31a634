package harness

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/reportdir"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// suite is the state of the one run a process holds: Ginkgo runs one suite
// per process.
type suite struct {
	opts  Options
	start time.Time
	armed []faults.Entry

	mu       sync.Mutex
	result   *reports.Run
	err      error
	warnings []string
	gate     reportGate // RunBinary waits on a write that began
}

// warn keeps a warning for the run's report and summary.
func (s *suite) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = append(s.warnings, msg)
}

// Register adds conform's chapters to the caller's own Ginkgo suite, for
// newRealm, and a ReportAfterSuite that writes the reports. It returns
// true, so a suite file can say `var _ = harness.Register(newRealm)`. The
// run's settings come from opts under the CONFORM_* environment, which
// ranks above them (see the package doc). Rows are selected by Ginkgo's
// own flags (-ginkgo.label-filter) as usual: the suite is the caller's, so
// a label filter from opts or CONFORM_* (or a repro's row) does not
// select rows here.
func Register(newRealm NewRealm, opts ...Option) bool {
	o, err := resolve(opts)
	if err != nil {
		panic("conform: " + err.Error())
	}
	s := &suite{opts: o}
	s.register(newRealm)
	return true
}

func (s *suite) register(newRealm NewRealm) {
	o := s.opts
	cfg := chapterConfig(o, newRealm)
	cfg.Warn = s.warn
	BeforeSuite(func() {
		s.start = time.Now()
		if err := s.arm(); err != nil {
			Fail("conform: " + err.Error())
		}
	})
	chapter.RegisterAll(cfg, chapters())
	if o.Progress != nil {
		ReportAfterEach(func(r SpecReport) { progressLine(o.Progress, r) })
	}
	ReportAfterSuite("conform reports", func(r Report) {
		if !s.gate.begin() {
			return
		}
		defer s.gate.end()
		s.disarm()
		run := s.collect(r)
		s.mu.Lock()
		s.result = run
		s.mu.Unlock()
		if o.Result != nil {
			*o.Result = run
		}
		var werr error
		if o.ReportDir != "-" {
			beforeReportWrite()
			if werr = reports.WriteAll(o.ReportDir, run); werr != nil {
				s.mu.Lock()
				s.err = werr
				s.mu.Unlock()
			}
		}
		if o.Progress != nil {
			summary(o.Progress, run, o.ReportDir, werr)
		}
		if werr != nil {
			Fail("conform: writing the reports: " + werr.Error())
		}
		if v := run.Verdict(); !v.Passing() && v != reports.VerdictInterrupted {
			Fail("conform: " + v.Label() + ":\n  " + strings.Join(run.Reasons(), "\n  "))
		}
	})
}

// arm arms the run's failpoints; a bad one fails the suite before any row.
func (s *suite) arm() error {
	for _, fp := range s.opts.Failpoints {
		e, terms, err := faults.ParseFailpointFlag(fp)
		if err != nil {
			return err
		}
		if err := faults.Arm(e, terms); err != nil {
			return err
		}
		s.armed = append(s.armed, e)
	}
	return nil
}

func (s *suite) disarm() {
	for _, e := range s.armed {
		faults.Disarm(e)
	}
	s.armed = nil
}

// Run runs every chapter over newRealm from a plain `go test` and writes
// the reports. t fails unless the verdict passes (reports.Verdict): a row
// failed, left something not exercised or did not run, or the selection
// held no row. WithResult gives the run's report model. Call it once per test binary: Ginkgo runs
// one suite per process. The CONFORM_* environment ranks above opts, and
// t logs the effective settings first.
func Run(t *testing.T, newRealm NewRealm, opts ...Option) {
	t.Helper()
	st, err := resolveEnv(opts, os.Getenv)
	if err != nil {
		t.Fatalf("conform: %v", err)
	}
	o := st.Options
	s := &suite{opts: o}
	s.register(newRealm)
	sc, rc := GinkgoConfiguration()
	sc.LabelFilter = joinFilters(sc.LabelFilter, o.LabelFilter)
	if err := checkSelection(sc.LabelFilter, activeChapters(o)); err != nil {
		t.Fatalf("conform: %v", err)
	}
	t.Log(st.header())
	RunSpecs(t, "conform", sc, rc)
}

// failRecorder is the GinkgoTestingT of a run outside `go test`.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// RunBinary runs every chapter over newRealm outside `go test`, as the
// command does, with Ginkgo's own output silenced in favour of
// Options.Progress. It reads no CONFORM_* variable: a command maps those
// onto its flags itself (Command does). It returns the
// report model; an error with a nil model when the run could not be made,
// and with the model when the reports could not be written.
func RunBinary(newRealm NewRealm, opts ...Option) (*reports.Run, error) {
	st, err := resolveEnv(opts, noEnv)
	if err != nil {
		return nil, err
	}
	o := st.Options
	if o.Progress != nil {
		formatter.ColorableStdOut = io.Discard
	}
	s := &suite{opts: o}
	s.register(newRealm)
	sc, rc := GinkgoConfiguration()
	sc.LabelFilter = o.LabelFilter
	sc.Timeout = 24 * time.Hour
	rc.NoColor = true
	if err := checkSelection(sc.LabelFilter, activeChapters(o)); err != nil {
		return nil, err
	}
	RunSpecs(&failRecorder{}, "conform", sc, rc)
	s.gate.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result == nil {
		return nil, fmt.Errorf("the run ended without a report")
	}
	return s.result, s.err
}

func joinFilters(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + ") && (" + b + ")"
}

// ValidateLabelFilter checks a label filter expression without running.
func ValidateLabelFilter(f string) error {
	_, err := selection(f, chapters())
	return err
}

// chapterConfig returns the chapters' config of a run with o over
// newRealm.
func chapterConfig(o Options, newRealm NewRealm) chapter.Config {
	fences, _ := fencesCommand(o.Fences) // resolve checked it
	return chapter.Config{
		NewRealm:    newRealm,
		Seed:        o.Seed,
		RowTimeout:  o.RowTimeout,
		CallTimeout: o.CallTimeout,
		Timing:      chapter.NewTiming(o.CallTimeout),
		Settle:      o.Settle,
		Repro: func(rowID reports.RowID) string {
			return ReproLine(Repro{Seed: o.Seed, Row: string(rowID), Failpoints: o.Failpoints, Store: o.Store, Fences: o.Fences})
		},
		Fences:     fences,
		FencesDir:  o.FencesDir,
		KeepRealms: o.KeepRealms,
		Explore: chapter.ExploreConfig{
			Histories: o.exploreBudget(),
			For:       o.exploreFor,
			Parallel:  o.ExploreParallel,
			Only:      o.ExploreHist,
			History:   o.ExploreHistory,
			Repro: func(i int) string {
				return ReproLine(Repro{Seed: o.Seed, Row: string(explore.RowID), Failpoints: o.Failpoints, Store: o.Store, Hist: &i})
			},
			ReproHistory: func(i int, history string) string {
				return ReproLine(Repro{Seed: o.Seed, Row: string(explore.RowID), Failpoints: o.Failpoints, Store: o.Store, Hist: &i, History: history})
			},
			Progress: o.ExploreProgress,
			Ledger:   o.Ledger,
			Shard:    o.Shard.Index,
			Shards:   o.Shard.Count,
		},
	}
}

// activeChapters returns the chapters a run with o includes.
func activeChapters(o Options) []chapter.Chapter {
	return chapter.Active(chapterConfig(o, nil), chapters())
}

// selection returns the rows of chs that label filter f selects.
func selection(f string, chs []chapter.Chapter) (map[reports.RowID]bool, error) {
	if f == "" {
		return chapter.Selected(chs, nil), nil
	}
	match, err := types.ParseLabelFilter(f)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %s", f, plain(err.Error()))
	}
	return chapter.Selected(chs, match), nil
}

// checkSelection refuses a label filter that is malformed or selects no
// row of chs: an empty run shows nothing, so it is bad input, not a pass.
func checkSelection(f string, chs []chapter.Chapter) error {
	sel, err := selection(f, chs)
	if err != nil {
		return err
	}
	if len(sel) == 0 {
		return fmt.Errorf("label filter %q selects no row of this run; labels that exist: %s", f, strings.Join(knownLabels(chs), ", "))
	}
	return nil
}

// knownLabels lists the labels a filter can name in chs: chapters, rows
// and obligations.
func knownLabels(chs []chapter.Chapter) []string {
	var out []string
	seen := map[string]bool{}
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	for _, c := range chs {
		add(c.ID.Label())
	}
	for _, c := range chs {
		for _, r := range c.Rows() {
			add(r.ID.Label())
		}
	}
	for _, o := range catalogue(chs) {
		add(string(o.ID))
	}
	return out
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// plain strips terminal colours and folds lines, for one-line errors.
func plain(s string) string {
	return strings.Join(strings.Fields(ansi.ReplaceAllString(s, "")), " ")
}

func progressLine(w io.Writer, r SpecReport) {
	if r.LeafNodeType != types.NodeTypeIt {
		return
	}
	st := specStatus(r)
	if st == reports.StatusNotRun && !hasEntry(r, chapter.EntryNotRun) {
		return // filtered out: not worth a line
	}
	mark := map[reports.Status]string{reports.StatusPassed: "PASS", reports.StatusFailed: "FAIL", reports.StatusNotExercised: "N/E ", reports.StatusNotRun: "SKIP"}[st]
	texts := r.ContainerHierarchyTexts
	row := ""
	if len(texts) > 0 {
		row = texts[len(texts)-1]
	}
	fmt.Fprintf(w, "%s  %-32s %s (%s)\n", mark, textsafe.Line(row), textsafe.Line(shorten(r.LeafNodeText, 120)), r.RunTime.Round(time.Millisecond))
	if st == reports.StatusFailed {
		msg := r.Failure.Message
		if i := strings.Index(msg, "\n"); i > 0 {
			msg = msg[:i]
		}
		fmt.Fprintf(w, "      %s\n", textsafe.Line(textsafe.Clip(msg, 300)))
	}
}

// summary prints the verdict, the counts and why, then where the reports
// went (or why they did not).
func summary(w io.Writer, run *reports.Run, dir string, werr error) {
	c := run.Counts()
	v := run.Verdict()
	left := ""
	if n := notSelected(run); n > 0 {
		left = fmt.Sprintf(", %d not selected", n)
	}
	fmt.Fprintf(w, "\n%s: %d rows passed%s, %d failed, %d not exercised, %d not run%s (%s, seed %d)\n",
		strings.ToUpper(v.Label()), c[reports.StatusPassed], inPartNote(passedInPart(run)), c[reports.StatusFailed], c[reports.StatusNotExercised], c[reports.StatusNotRun], left, run.Duration.Round(time.Millisecond), run.Seed)
	if !run.Interrupted {
		for _, why := range run.Reasons() {
			fmt.Fprintf(w, "  %s\n", textsafe.Line(textsafe.Clip(why, 400)))
		}
	}
	for _, warning := range run.Warnings {
		fmt.Fprintf(w, "warning: %s\n", textsafe.Line(textsafe.Clip(warning, 400)))
	}
	switch {
	case dir == "-":
	case werr != nil:
		fmt.Fprintf(w, "reports NOT written: %s\n", textsafe.Line(werr.Error()))
	default:
		fmt.Fprintf(w, "reports: %s/{%s}\n", strings.TrimRight(textsafe.Line(dir), "/"), strings.Join(reportdir.Files, ","))
	}
}

// shorten cuts s to at most n runes, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// catalogue returns the obligations of chs: the shared catalogue, then
// each chapter's own.
func catalogue(chs []chapter.Chapter) chapter.Catalogue {
	out := append(chapter.Catalogue(nil), chapter.Obligations...)
	for _, c := range chs {
		out = append(out, c.Obligations...)
	}
	return out
}

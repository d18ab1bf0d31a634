package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/reportdir"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/internal/spec"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// suite is the state of one run: its options, its start, its fault
// injector, the failpoints it armed there and the warnings it kept. Each
// run has its own.
type suite struct {
	opts  settings.Settings
	start time.Time
	inj   *faults.Injector
	armed []faults.Entry

	mu       sync.Mutex
	warnings []string
}

// newSuite returns the state of a run with o, with an injector of its own.
func newSuite(o settings.Settings) *suite { return &suite{opts: o, inj: faults.NewInjector()} }

// warn keeps a warning for the run's report and summary.
func (s *suite) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = append(s.warnings, msg)
}

// tree returns the run's tree of chapters over newRealm.
func (s *suite) tree(newRealm NewRealm) *spec.Tree {
	cfg := chapterConfig(s.opts, newRealm)
	cfg.Warn = s.warn
	cfg.Injector = s.inj
	t := spec.NewTree()
	chapter.RegisterAll(t, cfg, chaptersOf(s.opts.Options))
	return t
}

// execute runs the chapters over newRealm under ctx, with label filter f
// and the run's bound timeout, and returns the specs' results. Ending ctx
// interrupts the run. A failpoint that cannot be armed fails every row
// before any runs, as a failed BeforeSuite did.
func (s *suite) execute(ctx context.Context, newRealm NewRealm, f string, timeout time.Duration) *spec.Report {
	s.start = time.Now()
	t := s.tree(newRealm)
	match, err := spec.ParseFilter(f)
	if err != nil {
		match = func([]string) bool { return false } // checkSelection refused it before
	}
	cfg := spec.Config{Filter: match, Timeout: timeout}
	if o := s.opts; o.Progress != nil {
		cfg.OnSpec = func(r *spec.Result) { progressLine(o.Progress, r) }
	}
	if err := s.arm(); err != nil {
		s.disarm()
		cfg.Filter = func([]string) bool { return false }
		cfg.OnSpec = nil
		rep := spec.Run(ctx, t, cfg)
		rep.Specs = append(rep.Specs, &spec.Result{Node: "BeforeSuite", State: spec.Failed, Ran: true, Message: "conform: " + err.Error()})
		return rep
	}
	defer s.disarm()
	return spec.Run(ctx, t, cfg)
}

// finish builds the report model from the specs' results, writes the
// reports and prints the summary. It returns the model, and the error of
// a write that failed.
func (s *suite) finish(rep *spec.Report, filter string, interrupted bool) (*reports.Run, error) {
	o := s.opts
	run := s.collect(rep.Specs, filter, interrupted)
	if o.Result != nil {
		*o.Result = run
	}
	var werr error
	if o.ReportDir != "-" {
		beforeReportWrite()
		werr = reports.WriteAll(o.ReportDir, run)
	}
	if o.Progress != nil {
		summary(o.Progress, run, o.ReportDir, werr)
	}
	return run, werr
}

// verdictFailure returns why a run with model run and write error werr
// fails its test, or "" when it does not: a write that failed, or a
// verdict that does not pass (but for an interrupted run).
func verdictFailure(run *reports.Run, werr error) string {
	if werr != nil {
		return "conform: writing the reports: " + werr.Error()
	}
	if v := run.Verdict(); !v.Passing() && v != reports.VerdictInterrupted {
		return "conform: " + v.Label() + ":\n  " + strings.Join(run.Reasons(), "\n  ")
	}
	return ""
}

// arm arms the run's failpoints on its injector; a bad one fails the run
// before any row.
func (s *suite) arm() error {
	for _, fp := range s.opts.Failpoints {
		e, terms, err := faults.ParseFailpointFlag(fp)
		if err != nil {
			return err
		}
		if err := s.inj.Arm(e, terms); err != nil {
			return err
		}
		s.armed = append(s.armed, e)
	}
	return nil
}

func (s *suite) disarm() {
	for _, e := range s.armed {
		s.inj.Disarm(e)
	}
	s.armed = nil
}

// testTimeout bounds a run under go test, as Ginkgo's default suite
// timeout did; a run that reaches it ends as interrupted.
const testTimeout = time.Hour

// binaryTimeout bounds a run of the command: in effect, not at all.
const binaryTimeout = 24 * time.Hour

// Run runs every chapter over newRealm from a plain `go test`, writes the
// reports and returns the run's report model. t fails unless the verdict
// passes (reports.Verdict): a row failed, left something not exercised or
// did not run, or the selection held no row. Run may be called any
// number of times in one test binary; each run has its own state. The
// CONFORM_* environment ranks above opts, and t logs the effective
// settings first. Without WithProgress, t logs each spec's line.
func Run(t *testing.T, newRealm NewRealm, opts ...Option) *reports.Run {
	t.Helper()
	return run(t, newRealm, opts...)
}

// run is Run for any testing.TB, so that a test can watch a run fail.
func run(tb testing.TB, newRealm NewRealm, opts ...Option) *reports.Run {
	tb.Helper()
	st, err := resolveEnv(opts, os.Getenv)
	if err != nil {
		tb.Fatalf("conform: %v", err)
		return nil
	}
	if err := checkSelection(st.LabelFilter, activeChapters(st.Options)); err != nil {
		tb.Fatalf("conform: %v", err)
		return nil
	}
	tb.Log(st.Header(Version))
	s := newSuite(st)
	rep := s.executeLogged(tb, newRealm)
	res, werr := s.finish(rep, st.LabelFilter, rep.Interrupted)
	if msg := verdictFailure(res, werr); msg != "" {
		tb.Error(msg)
	}
	return res
}

// executeLogged is execute for a test: without WithProgress, tb logs
// each spec's line instead.
func (s *suite) executeLogged(tb testing.TB, newRealm NewRealm) *spec.Report {
	if s.opts.Progress != nil {
		return s.execute(context.Background(), newRealm, s.opts.LabelFilter, testTimeout)
	}
	s.opts.Progress = tbWriter{tb}
	defer func() { s.opts.Progress = nil }()
	return s.execute(context.Background(), newRealm, s.opts.LabelFilter, testTimeout)
}

// tbWriter writes each line to a test's log.
type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// RunBinary runs every chapter over newRealm outside `go test`, as the
// command does, with its lines on Options.Progress. It reads no CONFORM_*
// variable: a command maps those onto its flags itself (Command does). A
// SIGINT or SIGTERM the command's watch notes interrupts the run. It
// returns the report model; an error with a nil model when the run could
// not be made, and with the model when the reports could not be written.
func RunBinary(newRealm NewRealm, opts ...Option) (*reports.Run, error) {
	o, err := resolveEnv(opts, noEnv)
	if err != nil {
		return nil, err
	}
	if err := checkSelection(o.LabelFilter, activeChapters(o.Options)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	beforeRows()
	if ch := firstInterrupt(); ch != nil {
		select {
		case <-ch:
			cancel() // a signal before the first row: none runs
		default:
			go func() {
				select {
				case <-ch:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
	}
	s := newSuite(o)
	rep := s.execute(ctx, newRealm, o.LabelFilter, binaryTimeout)
	// The run is complete when its last row ended before any interrupt
	// (rep.Interrupted is false): a signal from here on changes no output.
	afterRows()
	return s.finish(rep, o.LabelFilter, rep.Interrupted)
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

// ValidateLabelFilter checks a label filter expression against the
// chapters of a run with opts, without running.
func ValidateLabelFilter(f string, opts ...Option) error {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	_, err := selection(f, chaptersOf(o))
	return err
}

// chapterConfig returns the chapters' config of a run with s over
// newRealm.
func chapterConfig(s settings.Settings, newRealm NewRealm) chapter.Config {
	return chapter.Config{NewRealm: newRealm, Settings: s, Timing: chapter.NewTiming(s.CallTimeout)}
}

// activeChapters returns the chapters a run with o includes.
func activeChapters(o Options) []chapter.Chapter {
	return chapter.Active(chapterConfig(settings.Settings{Options: o}, nil), chaptersOf(o))
}

// selection returns the rows of chs that label filter f selects.
func selection(f string, chs []chapter.Chapter) (map[reports.RowID]bool, error) {
	if f == "" {
		return chapter.Selected(chs, nil), nil
	}
	match, err := spec.ParseFilter(f)
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

// progressLine writes a spec's line: its status, row, text and time, and
// the first line of its failure. A spec the filter left out gets none.
func progressLine(w io.Writer, r *spec.Result) {
	if r.Node != "" {
		return
	}
	st := specStatus(r)
	if st == reports.StatusNotRun && len(r.NotRun) == 0 {
		return // filtered out: not worth a line
	}
	mark := map[reports.Status]string{reports.StatusPassed: "PASS", reports.StatusFailed: "FAIL", reports.StatusNotExercised: "N/E ", reports.StatusNotRun: "SKIP"}[st]
	row := ""
	if len(r.Path) > 0 {
		row = r.Path[len(r.Path)-1]
	}
	fmt.Fprintf(w, "%s  %-32s %s (%s)\n", mark, textsafe.Line(row), textsafe.Line(shorten(r.Text, 120)), r.Duration.Round(time.Millisecond))
	if st == reports.StatusFailed {
		msg := r.Message
		if i := strings.Index(msg, "\n"); i > 0 {
			msg = msg[:i]
		}
		fmt.Fprintf(w, "      %s\n", textsafe.Line(textsafe.Clip(msg, 300)))
	}
}

// summary prints the verdict, the counts and why, then where the reports
// went (or why they did not).
func summary(w io.Writer, run *reports.Run, dir string, werr error) {
	fmt.Fprintf(w, "\n%s: %s (%s, seed %d)\n",
		strings.ToUpper(run.Verdict().Label()), run.Summary(), run.Duration.Round(time.Millisecond), run.Seed)
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

// catalogue returns the obligations of chs: the shared catalogue when chs
// hold a store's chapter, then each chapter's own. A fences run's are the
// admission chapter's alone.
func catalogue(chs []chapter.Chapter) chapter.Catalogue {
	var out chapter.Catalogue
	if slices.ContainsFunc(chs, isStoreChapter) {
		out = append(out, chapter.Obligations...)
	}
	for _, c := range chs {
		out = append(out, c.Obligations...)
	}
	return out
}

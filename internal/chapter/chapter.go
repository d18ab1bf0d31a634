package chapter

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/reports"
)

// Row is one row of a chapter: its ID (label "row:ID"), the name the spec's
// Conformance table gives it, the obligations it checks, the rows before
// it that it takes something from, and the function that registers its
// specs.
type Row struct {
	ID          reports.RowID
	Name        string
	Obligations []reports.ObligationID
	// DependsOn lists the rows whose leftovers this row uses. Empty means
	// the row sets up what it needs itself, so a label filter that selects
	// it alone gives the same verdict.
	DependsOn []reports.RowID
	// Specs registers the row's specs through s.
	Specs func(s *Specs)
}

// Specs is what a row's Specs function gets: the Env of the run (valid
// once the specs run) and the decorators every spec carries.
type Specs struct {
	row    *Row
	env    func() *Env
	timing *Timing // the run's: why the store became unavailable
	spec   []any
	record *[][]string // set: It records the spec's labels and registers nothing
}

// down returns why the store became unavailable earlier in the run, or "".
func (s *Specs) down() string {
	if s.timing == nil {
		return ""
	}
	return s.timing.Down()
}

// It registers one spec of the row, with the labels of the obligations it
// checks. The spec is not run once the store became unavailable in the
// run; its harness-side time is bounded by the row timeout (specClock),
// each store call by its per-call bound, and the whole spec, as a last
// resort against a harness that stops, by LastResort.
func (s *Specs) It(text string, obligations []reports.ObligationID, body func(ctx context.Context, e *Env)) {
	labels := make(Labels, 0, len(obligations))
	for _, o := range obligations {
		labels = append(labels, string(o))
	}
	if s.record != nil {
		*s.record = append(*s.record, labels)
		return
	}
	args := append([]any{labels}, s.spec...)
	id := s.row.ID
	args = append(args, func(ctx SpecContext) {
		if why := s.down(); why != "" {
			AddReportEntry(EntryNotRun, why, ReportEntryVisibilityNever)
			Skip("not run: " + why)
		}
		e := s.env()
		if e == nil {
			Fail("the realm could not be opened; see the chapter's first failure")
		}
		e.beginSpec(id, CurrentSpecReport().FullText())
		e.probeHealth()
		if why := e.timing.Down(); why != "" {
			AddReportEntry(EntryNotRun, why, ReportEntryVisibilityNever)
			Skip("not run: " + why)
		}
		bound := e.Cfg.RowBound()
		sctx, spent := e.specClock(ctx, bound)
		defer spent()
		body(sctx, e)
		if spent() {
			Fail(fmt.Sprintf("the spec spent more than its bound of %s of the harness's own time (time in which none of its store calls was in flight)", bound))
		}
	})
	It(text, args...)
}

// Chapter is one chapter: its ID (label "chapter:ID"), its title, and its
// rows in order (required: the harness lists and reports a chapter by its
// rows). Register registers its specs for a config; nil means RegisterRows
// over the chapter's rows and one host-store realm. A chapter that needs no
// realm, or another kind of one, sets its own and builds its container with
// Decorators.
type Chapter struct {
	ID       reports.ChapterID
	Title    string
	Rows     func() []*Row
	Register func(cfg Config) bool
	// Runs reports whether a run with cfg includes the chapter; nil means
	// always. A chapter a run leaves out is listed, but none of its rows is
	// selected.
	Runs func(cfg Config) bool
	// Obligations are the chapter's own obligations, beyond the shared
	// catalogue (Obligations).
	Obligations Catalogue
}

// Active returns the chapters a run with cfg includes.
func Active(cfg Config, chapters []Chapter) []Chapter {
	var out []Chapter
	for _, c := range chapters {
		if c.Runs == nil || c.Runs(cfg) {
			out = append(out, c)
		}
	}
	return out
}

// register registers c for cfg.
func (c Chapter) register(cfg Config) bool {
	if c.Register != nil {
		return c.Register(cfg)
	}
	return RegisterRows(cfg, c.ID, c.Title, c.Rows())
}

// RegisterAll registers the chapters for cfg, in the order given, but for
// those a run with cfg leaves out (Chapter.Runs); each gets a realm of its
// own. They sit in one container, so that Ginkgo,
// which shuffles top-level containers, runs them in that order. It
// returns true.
func RegisterAll(cfg Config, chapters []Chapter) bool {
	Describe("conform", Ordered, ContinueOnFailure, func() {
		nested = true
		defer func() { nested = false }()
		for _, c := range Active(cfg, chapters) {
			c.register(cfg)
		}
	})
	return true
}

// nested is true while RegisterAll registers the chapters inside its own
// Ordered container, which alone may carry ContinueOnFailure (Ginkgo's rule
// for nested Ordered containers).
var nested bool

// Decorators returns the decorators of a chapter's own container: Ordered,
// the label "chapter:ID", and ContinueOnFailure unless RegisterAll's
// container already carries it. A chapter with its own Register uses them.
func Decorators(id reports.ChapterID) []any {
	d := []any{Ordered, Label(id.Label())}
	if !nested {
		d = append(d, ContinueOnFailure)
	}
	return d
}

// RegisterRows registers a chapter made of rows: one Ordered container
// over one realm, made fresh by cfg.NewRealm when the chapter starts. The
// rows run in order and go on after a failure (ContinueOnFailure); each can
// be selected by its label "row:ID", and by "ob:N" for an obligation it
// checks. It returns true, so that it can be called as `var _ = ...`.
func RegisterRows(cfg Config, id reports.ChapterID, title string, rows []*Row) bool {
	var env *Env
	Describe(title, append(Decorators(id), func() {
		BeforeAll(func(ctx SpecContext) {
			if cfg.Timing != nil && cfg.Timing.Down() != "" {
				return // every spec is not run
			}
			e, err := newEnv(ctx, cfg)
			if err != nil {
				Fail("the chapter could not start: " + err.Error())
			}
			env = e
		}, NodeTimeout(cfg.RowBound()))
		AfterAll(func() {
			if env != nil {
				env.close()
			}
		})
		for _, row := range rows {
			Describe(row.Name, Label(row.ID.Label()), func() {
				row.Specs(&Specs{row: row, env: func() *Env { return env }, timing: cfg.Timing, spec: []any{SpecTimeout(LastResort(cfg))}})
			})
		}
	})...)
	return true
}

// LastResort is how long a spec may take in all before Ginkgo abandons it:
// an hour, or sixty row timeouts when that is longer. The harness's own
// time (RowTimeout) and every store call (CallTimeout) have bounds of
// their own far below it; it only stops a harness that stopped itself.
func LastResort(cfg Config) time.Duration {
	return max(time.Hour, 60*cfg.RowBound())
}

// SpecLabels returns the labels each spec of row carries in chapter ch, as
// Ginkgo sees them (the chapter's, the row's and the spec's own), without
// registering anything.
func SpecLabels(ch reports.ChapterID, row *Row) [][]string {
	var own [][]string
	row.Specs(&Specs{row: row, record: &own})
	out := make([][]string, len(own))
	for i, l := range own {
		out[i] = append([]string{ch.Label(), row.ID.Label()}, l...)
	}
	return out
}

// Selected returns the rows of chapters that match selects: those with at
// least one spec whose labels it matches. A nil match selects every row.
func Selected(chapters []Chapter, match func(labels []string) bool) map[reports.RowID]bool {
	sel := map[reports.RowID]bool{}
	for _, c := range chapters {
		for _, row := range c.Rows() {
			for _, labels := range SpecLabels(c.ID, row) {
				if match == nil || match(labels) {
					sel[row.ID] = true
					break
				}
			}
		}
	}
	return sel
}

// DependsOnText returns a row's DependsOn in words, as `conform list -v`
// shows it.
func (r *Row) DependsOnText() string {
	if len(r.DependsOn) == 0 {
		return "nothing: the row sets up what it needs"
	}
	s := ""
	for i, id := range r.DependsOn {
		if i > 0 {
			s += ", "
		}
		s += id.Label()
	}
	return s
}

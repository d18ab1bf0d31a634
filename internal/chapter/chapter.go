package chapter

import (
	"context"
	"fmt"
	"time"

	"github.com/conform-spi/conform/internal/spec"

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
// once the specs run) and the decorations every spec carries.
type Specs struct {
	tree   *spec.Tree
	row    *Row
	env    func() *Env
	timing *Timing // the run's: why the store became unavailable
	spec   spec.Opts
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
	labels := make([]string, 0, len(obligations))
	for _, o := range obligations {
		labels = append(labels, string(o))
	}
	if s.record != nil {
		*s.record = append(*s.record, labels)
		return
	}
	o := s.spec
	o.Labels = labels
	id := s.row.ID
	s.tree.It(text, o, func(ctx context.Context) {
		sp := spec.From(ctx)
		if why := s.down(); why != "" {
			sp.NotRun(why)
		}
		e := s.env()
		if e == nil {
			spec.Fail("the realm could not be opened; see the chapter's first failure")
		}
		e.beginSpec(id, sp)
		e.probeHealth()
		if why := e.timing.Down(); why != "" {
			sp.NotRun(why)
		}
		bound := e.Cfg.Settings.RowBound()
		sctx, spent := e.specClock(ctx, bound)
		defer spent()
		body(sctx, e)
		if spent() {
			spec.Fail(fmt.Sprintf("the spec spent more than its bound of %s of the harness's own time (time in which none of its store calls was in flight)", bound))
		}
	})
}

// Chapter is one chapter: its ID (label "chapter:ID"), its title, and its
// rows in order (required: the harness lists and reports a chapter by its
// rows). Register registers its specs into a run's tree for a config; nil
// means RegisterRows over the chapter's rows and one host-store realm. A
// chapter that needs no realm, or another kind of one, sets its own and
// builds its container with Decorators.
type Chapter struct {
	ID       reports.ChapterID
	Title    string
	Rows     func() []*Row
	Register func(t *spec.Tree, cfg Config)
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

// register registers c into t for cfg.
func (c Chapter) register(t *spec.Tree, cfg Config) {
	if c.Register != nil {
		c.Register(t, cfg)
		return
	}
	RegisterRows(t, cfg, c.ID, c.Title, c.Rows())
}

// RegisterAll registers the chapters into t for cfg, in the order given,
// but for those a run with cfg leaves out (Chapter.Runs); each gets a
// realm of its own. They sit in one ordered container that goes on after
// a failure, so that they run in that order, also under Ginkgo, which
// shuffles top-level containers.
func RegisterAll(t *spec.Tree, cfg Config, chapters []Chapter) {
	t.Describe("conform", spec.Opts{Ordered: true, ContinueOnFailure: true}, func() {
		for _, c := range Active(cfg, chapters) {
			c.register(t, cfg)
		}
	})
}

// Decorators returns the decorations of a chapter's own container in t:
// ordered, the label "chapter:ID", and ContinueOnFailure unless an
// ordered container around it already carries it (Ginkgo's rule for
// nested ordered containers). A chapter with its own Register uses them.
func Decorators(t *spec.Tree, id reports.ChapterID) spec.Opts {
	return spec.Opts{Ordered: true, Labels: []string{id.Label()}, ContinueOnFailure: !t.Nested()}
}

// RegisterRows registers a chapter made of rows into t: one ordered
// container over one realm, made fresh by cfg.NewRealm when the chapter
// starts. The rows run in order and go on after a failure; each can be
// selected by its label "row:ID", and by "ob:N" for an obligation it
// checks.
func RegisterRows(t *spec.Tree, cfg Config, id reports.ChapterID, title string, rows []*Row) {
	var env *Env
	t.Describe(title, Decorators(t, id), func() {
		t.BeforeAll(spec.Opts{Timeout: cfg.Settings.RowBound()}, func(ctx context.Context) {
			if cfg.Timing != nil && cfg.Timing.Down() != "" {
				return // every spec is not run
			}
			e, err := newEnv(ctx, cfg)
			if err != nil {
				spec.Fail("the chapter could not start: " + err.Error())
			}
			env = e
		})
		t.AfterAll(func() {
			if env != nil {
				env.close()
			}
		})
		for _, row := range rows {
			t.Describe(row.Name, spec.Opts{Labels: []string{row.ID.Label()}}, func() {
				row.Specs(&Specs{tree: t, row: row, env: func() *Env { return env }, timing: cfg.Timing, spec: spec.Opts{Timeout: LastResort(cfg)}})
			})
		}
	})
}

// LastResort is how long a spec may take in all before the runner abandons it:
// an hour, or sixty row timeouts when that is longer. The harness's own
// time (RowTimeout) and every store call (CallTimeout) have bounds of
// their own far below it; it only stops a harness that stopped itself.
func LastResort(cfg Config) time.Duration {
	return max(time.Hour, 60*cfg.Settings.RowBound())
}

// SpecLabels returns the labels each spec of row carries in chapter ch, as
// the runner sees them (the chapter's, the row's and the spec's own), without
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

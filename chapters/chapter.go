package chapters

import (
	"context"
	"io"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// ChapterHostStore is the host store chapter's name and label.
const ChapterHostStore = "host-store"

// Row is one row of a chapter: its ID (label "row:ID"), the name the spec's
// Conformance table gives it, the obligations it checks, what it depends on
// from the rows before it, and the function that registers its specs.
type Row struct {
	ID          string
	Name        string
	Obligations []string
	// DependsOn says what the row takes from the rows before it. Every row
	// here sets up what it needs itself, so a label filter that selects it
	// alone gives the same verdict.
	DependsOn string
	register  func(e *rowEnv)
}

// rowEnv is what a row's registration function gets: the Env of the run
// (valid once the specs run) and the decorators every spec carries.
type rowEnv struct {
	row  *Row
	env  func() *Env
	spec []any
}

// It registers one spec of the row, with the row's time bound and the
// labels of the obligations it checks.
func (r *rowEnv) It(text string, obligations []string, body func(ctx context.Context, e *Env)) {
	labels := Label(obligations...)
	args := append([]any{labels}, r.spec...)
	id := r.row.ID
	args = append(args, func(ctx SpecContext) {
		e := r.env()
		if e == nil {
			Fail("the realm could not be opened; see the chapter's first failure")
		}
		e.beginSpec(id, CurrentSpecReport().FullText())
		e.probeHealth(ctx)
		if e.unusable != "" {
			AddReportEntry(EntryNotRun, e.unusable, ReportEntryVisibilityNever)
			Skip("not run: " + e.unusable)
		}
		body(ctx, e)
	})
	It(text, args...)
}

// HostStoreRows lists the host store chapter's rows in the order they run.
func HostStoreRows() []*Row {
	return []*Row{
		rowAcquireEmpty(),
		rowReopen(),
		rowKill(),
		rowStaleFence(),
		rowTakeover(),
		rowSameVersion(),
		rowRetry(),
		rowRowsRemovalListing(),
		rowIndependence(),
		rowStalledCommit(),
	}
}

// Chapter is one chapter: its ID (label "chapter:ID"), its title, its rows
// in order, and the function that registers its specs for a config.
type Chapter struct {
	ID       string
	Title    string
	Rows     func() []*Row
	Register func(cfg Config) bool
}

// extraChapters are chapters other files of this package add (init time).
var extraChapters []Chapter

// Chapters lists every chapter in the order a run registers them: the host
// store chapter first.
func Chapters() []Chapter {
	return append([]Chapter{{ID: ChapterHostStore, Title: "Host store chapter", Rows: HostStoreRows, Register: HostStore}}, extraChapters...)
}

// RegisterAll registers every chapter for cfg; each gets a realm of its own.
// They sit in one container, so that Ginkgo, which shuffles top-level
// containers, runs them in the order Chapters lists them.
func RegisterAll(cfg Config) bool {
	Describe("conform", Ordered, ContinueOnFailure, func() {
		nested = true
		defer func() { nested = false }()
		for _, c := range Chapters() {
			c.Register(cfg)
		}
	})
	return true
}

// nested is true while RegisterAll registers the chapters inside its own
// Ordered container, which alone may carry ContinueOnFailure (Ginkgo's rule
// for nested Ordered containers).
var nested bool

// RegisterRows registers a chapter made of rows: one Ordered container
// over one realm, made fresh by cfg.NewRealm when the chapter starts. The
// rows run in order and go on after a failure (ContinueOnFailure); each can
// be selected by its label "row:ID", and by "ob:N" for an obligation it
// checks. Chapters other than the host store chapter use it too.
func RegisterRows(cfg Config, id, title string, rows []*Row) bool {
	var env *Env
	decorators := []any{Ordered, Label("chapter:" + id)}
	if !nested {
		decorators = append(decorators, ContinueOnFailure)
	}
	Describe(title, append(decorators, func() {
		BeforeAll(func(ctx SpecContext) {
			e, err := newEnv(ctx, cfg)
			if err != nil {
				Fail("the chapter could not start: " + err.Error())
			}
			env = e
		}, NodeTimeout(cfg.rowTimeout()))
		AfterAll(func() {
			if env != nil {
				env.close()
			}
		})
		for _, row := range rows {
			row := row
			Describe(row.Name, Label("row:"+row.ID), func() {
				row.register(&rowEnv{row: row, env: func() *Env { return env }, spec: []any{SpecTimeout(cfg.rowTimeout())}})
			})
		}
	})...)
	return true
}

// HostStore registers the host store chapter for cfg (see RegisterRows). It
// answers true so that it can be called as `var _ = ...` inside a caller's
// own suite file.
func HostStore(cfg Config) bool {
	return RegisterRows(cfg, ChapterHostStore, "Host store chapter", HostStoreRows())
}

// closeQuietly closes a handle gracefully at the end of the chapter, where
// it implements io.Closer; a close error is traced, not a finding.
func (p *Proc) closeQuietly() {
	if c, ok := p.wrap.Inner().(io.Closer); ok {
		if err := c.Close(); err != nil {
			p.env.tracef("%s close: %v", p.Name(), err)
		}
	}
}

// ProbeInStore tells whether the store calls the in-store failpoint at site
// from its commit path, by committing a probe batch with a hold at site
// that is released before it arrives. The answer is kept for the run.
func (e *Env) ProbeInStore(ctx context.Context, site instore.Site) bool {
	GinkgoHelper()
	e.mu.Lock()
	if e.probed {
		ok := e.inStore[site]
		e.mu.Unlock()
		return ok
	}
	e.mu.Unlock()
	w := e.Writer(ctx)
	s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "conform/probe"}
	saved := e.rowID
	e.rowID = "probe"
	b := e.Batch(w, "probe", e.Up(s, WithHead([]byte("probe"))))
	e.rowID = saved
	holds := map[instore.Site]*faults.Hold{}
	for _, st := range instore.Sites {
		id := b.CommitID()
		h := faults.HoldAt(st, func(c hoststore.CommitID) bool { return c == id })
		h.Release()
		holds[st] = h
	}
	e.Commit(ctx, w, b, ObOperations)
	found := map[instore.Site]bool{}
	for st, h := range holds {
		select {
		case <-h.Arrived():
			found[st] = true
		default:
		}
		h.Disarm()
	}
	e.mu.Lock()
	e.inStore, e.probed = found, true
	e.mu.Unlock()
	e.Note("in-store failpoints the store calls: %v", found)
	return found[site]
}

// Package settings holds the settings of one run: what the code, the
// command's flags and the CONFORM_* environment set, ranked in one place
// (Build), with where each came from. The run hands the value to its
// chapters, which read it as it is, and it renders the run's repro lines.
// It imports no test framework and nothing of the runner.
package settings

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/reports"
)

// Options are the settings a run's code sets, through Option. Every zero
// value is usable: a random seed (kept in the report and the repro line),
// 60 s of the harness's own time per spec, a per-call bound derived from
// the store's latency, reports in ./conform-report, no label filter, no
// failpoints.
type Options struct {
	// Seed drives every random choice; 0 draws one at random. Each row
	// draws from its own source derived from Seed and the row, so a row's
	// choices do not depend on which rows ran before it.
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
	// LabelFilter selects rows by label expression, e.g.
	// "row:stale-fence || ob:5".
	LabelFilter string
	// Failpoints are "name=terms" pairs armed for the whole run (see
	// faults.Catalogue).
	Failpoints []string
	// Store names the store in reports and repro lines (e.g. its URL).
	Store string
	// Progress, when set, gets one line per spec as it ends and a summary.
	Progress io.Writer
	// Settle bounds how long a row waits on something a correct store may
	// legitimately wait for (a takeover behind a held commit) before it
	// judges the other order; 0 means 2 s. It only picks which valid order
	// a row then checks. (The stall rows wait after the store's own commit
	// latency: 20 times its 99th percentile so far, at least 1 s.)
	Settle time.Duration
	// Fences is the fence implementation that `conform fences` certifies
	// over the admission chapter: "self" for conform's own fences (served
	// by the running executable), or "exec:PROGRAM ARGS" for a helper of
	// another implementation (docs/admission-helper-protocol.md; the
	// arguments are split at spaces). A store's run certifies no fences
	// and refuses it set.
	Fences string
	// FencesDir is where the admission chapter makes its directories; it
	// must host fences. Empty: the system's temporary directory.
	FencesDir string
	// KeepRealms keeps every chapter's realm after the run. By default the
	// harness closes each realm's factory when its chapter ends, if the
	// factory implements io.Closer; a factory that made its realm for the
	// run removes it then.
	KeepRealms bool
	// WithoutInStoreFaults declares that the store calls no in-store site.
	WithoutInStoreFaults bool
	// Result, when set, receives the run's report model after the run.
	Result **reports.Run
	// Explore is the exploration chapter's budget (label chapter:explore)
	// in histories: 0 takes DefaultExploreHistories, and a negative number
	// leaves the chapter out. Build resolves 0 to the default, so that in
	// the settings of a run a budget is positive or the chapter is out.
	Explore int
	// ExploreHist, when not nil, plays that one history of the exploration
	// chapter alone, as a repro's hist=N names it; it turns the chapter on.
	ExploreHist *int
	// ExploreHistory, when not empty, is a shrunk history of the
	// exploration chapter, as a repro's history= carries it: the chapter
	// replays it exactly, twice, instead of regenerating ExploreHist.
	ExploreHistory string
	// ExploreParallel is how many exploration histories play at once, each
	// over its own realm; 0 or 1 plays one at a time.
	ExploreParallel int
	// ExploreProgress, when set, gets the exploration chapter's progress
	// after each history.
	ExploreProgress func(ExploreStatus)
	// ExploreFor, when positive, makes the exploration's budget wall time
	// as well (`conform explore --budget`): the chapter starts no history
	// once it has passed.
	ExploreFor time.Duration
	// Shard, when its Count is above 1, makes the run one shard of a
	// campaign; the zero Shard is the whole run.
	Shard reports.Shard
	// Ledger are failing exploration histories of earlier runs, replayed
	// (each once, generated from its seed) before the budget.
	Ledger []reports.LedgerEntry
	// RunsFences makes the run a run of `conform fences`: it runs the
	// admission chapter instead of the store's chapters.
	RunsFences bool
}

// Option sets one field of Options.
type Option func(*Options)

// DefaultExploreHistories is the exploration chapter's budget unless an
// option, a flag or CONFORM_EXPLORE_HISTORIES sets another.
const DefaultExploreHistories = 300

// DefaultReportDir is where the reports go unless a setting says
// otherwise.
const DefaultReportDir = "conform-report"

// Settings are the settings of one run, as Build ranked them, and where
// the ones a run's header shows came from.
type Settings struct {
	Options
	// From says where the settings came from.
	From Sources
}

// Where a setting came from, besides a flag or a CONFORM_* variable.
const (
	FromDefault = "default"
	FromCode    = "code"
	FromDrawn   = "drawn"
)

// Sources say where the seed, the label filter, the failpoints and the
// report directory of a run came from: FromDefault, FromCode, FromDrawn,
// the name of a CONFORM_* variable, or a flag.
type Sources struct {
	Seed, Labels, Failpoints, ReportDir string
	// Env names the CONFORM_* variables that set something, in the order
	// the command's first line shows them.
	Env []string
}

// ExploreStatus is the exploration chapter's progress after a history.
type ExploreStatus struct {
	// Histories counts the histories played and judged so far, of Of.
	Histories, Of int
	// Ops counts their operations.
	Ops int
	// Reached counts the coverage items reached so far, of Items.
	Reached, Items int
	// Findings counts the histories that failed so far.
	Findings int
	// Finding is the headline of the history just judged when it failed,
	// with its repro line; "" when it passed.
	Finding string
	// Replayed, for a history replayed from a ledger, says so and how it
	// went; "" otherwise.
	Replayed string
}

// ExploreBudget returns the histories the exploration chapter plays of
// its budget: 0 when it is left out.
func (s Settings) ExploreBudget() int { return max(s.Explore, 0) }

// ExploreOn reports whether the run includes the exploration chapter: it
// has a budget, or plays one history a repro names.
func (s Settings) ExploreOn() bool {
	return s.ExploreBudget() > 0 || s.ExploreHist != nil || s.ExploreHistory != ""
}

// RowBound returns RowTimeout, or 60 s when it is zero.
func (s Settings) RowBound() time.Duration {
	if s.RowTimeout <= 0 {
		return 60 * time.Second
	}
	return s.RowTimeout
}

// SettleBound returns Settle, or 2 s when it is zero.
func (s Settings) SettleBound() time.Duration {
	if s.Settle <= 0 {
		return 2 * time.Second
	}
	return s.Settle
}

// FencesHelper returns the helper Fences names: nil for none, an empty
// slice for "self", the program and its arguments for "exec:...". Build's
// callers check Fences first (FencesCommand).
func (s Settings) FencesHelper() []string {
	cmd, _ := FencesCommand(s.Fences)
	return cmd
}

// FencesCommand parses a fence implementation: nil for "", an empty
// command for "self", the program and its arguments for "exec:...".
func FencesCommand(s string) ([]string, error) {
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

// Repro returns the repro line of row: the run's seed, failpoints and
// store (or fences), and the row.
func (s Settings) Repro(row reports.RowID) string {
	return ReproLine(Repro{Seed: s.Seed, Row: string(row), Failpoints: s.Failpoints, Store: s.Store, Fences: s.Fences})
}

// ReproHist returns the repro line that plays history i of row, the
// exploration chapter's, alone.
func (s Settings) ReproHist(row reports.RowID, i int) string {
	return ReproLine(Repro{Seed: s.Seed, Row: string(row), Failpoints: s.Failpoints, Store: s.Store, Hist: &i})
}

// ReproHistory returns the repro line that replays history, history i of
// row as the exploration chapter shrank it.
func (s Settings) ReproHistory(row reports.RowID, i int, history string) string {
	return ReproLine(Repro{Seed: s.Seed, Row: string(row), Failpoints: s.Failpoints, Store: s.Store, Hist: &i, History: history})
}

// Header returns the first line of a run under go test: conform's
// version and every effective setting with where it came from.
func (s Settings) Header(version string) string {
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
	case s.ExploreBudget() > 0:
		explore = fmt.Sprintf("%d histories", s.ExploreBudget())
	}
	return fmt.Sprintf("conform %s: store %s; seed %d (%s); label filter %s (%s); failpoints %s (%s); exploration %s; reports in %s (%s)",
		version, store, s.Seed, s.From.Seed, labels, s.From.Labels, fps, s.From.Failpoints, explore, s.ReportDir, s.From.ReportDir)
}

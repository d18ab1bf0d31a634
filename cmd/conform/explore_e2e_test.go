package main_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reports"
)

const exploreRow = reports.RowID("explore-histories")

func exploreRowOf(t *testing.T, run *reports.Run) reports.Row {
	t.Helper()
	for _, row := range run.Rows {
		if row.ID == exploreRow {
			return row
		}
	}
	t.Fatalf("no row %s in the report", exploreRow)
	return reports.Row{}
}

func TestListShowsTheExplorationChapter(t *testing.T) {
	r := conform(t, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Exploration chapter (label chapter:explore; certified by 'conform run')", "row:explore-histories", "300 histories of at most 200 operations by default", "0 leaves it out"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list does not mention %q:\n%s", want, r.stdout)
		}
	}
}

// TestExplorationIsOnByDefault: a plain run plays the default budget;
// --explore-histories 0 leaves the chapter out, and then a filter that
// selects only it is refused, saying so.
func TestExplorationIsOnByDefault(t *testing.T) {
	run := runReport(t, 0, "run", "--label-filter", "chapter:explore", "--seed", "3")
	if row := exploreRowOf(t, run); !row.Certified() || !strings.Contains(row.Output, "explored 300 histories") {
		t.Fatalf("the exploration row by default: %s, not exercised %v, output:\n%s", row.Status, row.NotExercised, row.Output)
	}
	r := conform(t, "run", "--label-filter", "chapter:explore", "--explore-histories", "0")
	if r.code != 2 || !strings.Contains(r.stderr, "--explore-histories 0 left the exploration chapter out") {
		t.Fatalf("exit %d, want 2 saying --explore-histories 0 left the chapter out\n%s", r.code, r.stderr)
	}
	off := runReport(t, 0, "run", "--rows", "retry", "--seed", "3", "--explore-histories", "0")
	if row := exploreRowOf(t, off); !row.NotSelected || row.Status != reports.StatusNotRun {
		t.Errorf("the exploration row ran with --explore-histories 0: %s, not selected %v", row.Status, row.NotSelected)
	}
}

func TestExplorationOverTheReferencePasses(t *testing.T) {
	run := runReport(t, 0, "run", "--explore-histories", "300", "--label-filter", "chapter:explore", "--seed", "5")
	row := exploreRowOf(t, run)
	if !row.Certified() || !strings.Contains(row.Output, "explored 300 histories") || !strings.Contains(row.Output, "33 of 33 items reached") {
		t.Fatalf("row %s, not exercised %v, output:\n%s", row.Status, row.NotExercised, row.Output)
	}
}

// TestExplorationCanaryFailsAndReproduces runs the chapter over a store
// that stores a multi-row append in reverse: the row fails naming an
// obligation, each failure carries its history and repro, and the row's
// repro, which names the history, fails again when reproduced. The bug
// shows in histories of one process, and the repro names the simplest
// failed history (fewest processes), so the replay is sequential and
// reproduces whatever the scheduler does (TestExplorationShrinksAndReplaysExactly
// covers a bug of several processes).
func TestExplorationCanaryFailsAndReproduces(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:reversed-append", "--explore-histories", "300", "--label-filter", "chapter:explore", "--seed", "7")
	row := exploreRowOf(t, run)
	if row.Status != reports.StatusFailed || len(row.Failures) == 0 {
		t.Fatalf("row %s with %d failures, want failed", row.Status, len(row.Failures))
	}
	obs := []reports.ObligationID{"ob:1", "ob:2", "ob:3", "ob:4", "ob:5", "ob:6", "ob:7", "ob:8", "ob:9", "ob:fence", "ob:ops", "ob:errors"}
	for _, f := range row.Failures {
		if !slices.Contains(obs, f.Obligation) || f.Expected == "" || f.Got == "" {
			t.Errorf("failure without an obligation of the row, or want/got: %+v", f)
		}
		if len(f.Trail) < 3 || !strings.Contains(f.Trail[0], "hist=") || !strings.HasPrefix(f.Trail[1], "#0 ") {
			t.Errorf("failure trail is not a repro then the history: %q", f.Trail[:min(3, len(f.Trail))])
		}
	}
	tok := between(t, row.Repro, "conform reproduce '", "'")
	if !strings.Contains(tok, "row=explore-histories") || !strings.Contains(tok, ";hist=") || !strings.Contains(tok, "seed=7") {
		t.Fatalf("repro %q does not name the row, the seed and the history", tok)
	}
	if !strings.Contains(row.Failures[0].Message, "1 processes") {
		t.Fatalf("the simplest failure is not a history of one process: %s", row.Failures[0].Message)
	}
	again := runReport(t, 1, "reproduce", tok)
	r := exploreRowOf(t, again)
	if r.Status != reports.StatusFailed || again.Store != "canary:reversed-append" || !strings.Contains(r.Output, "replayed") {
		t.Fatalf("reproduce: row %s on %q, output:\n%s", r.Status, again.Store, r.Output)
	}
	for _, other := range again.Rows {
		if other.ID != exploreRow && other.Status != reports.StatusNotRun {
			t.Errorf("reproduce ran row %s too", other.ID)
		}
	}
}

// TestExplorationShrinksAndReplaysExactly runs the chapter over a store
// that ignores fence tokens, a bug that shows only in histories of several
// processes: the chapter shrinks the simplest failed history, its repro
// carries the shrunk history (history=h1…), and reproducing it replays
// that history exactly, twice, and fails again every time.
func TestExplorationShrinksAndReplaysExactly(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:ignore-token", "--explore-histories", "300", "--label-filter", "chapter:explore", "--seed", "7")
	row := exploreRowOf(t, run)
	if row.Status != reports.StatusFailed || len(row.Failures) == 0 {
		t.Fatalf("row %s with %d failures, want failed", row.Status, len(row.Failures))
	}
	tok := between(t, row.Repro, "conform reproduce '", "'")
	if !strings.Contains(tok, "row=explore-histories") || !strings.Contains(tok, ";hist=") || !strings.Contains(tok, ";history=h1.") {
		t.Fatalf("repro %q does not carry the shrunk history", tok)
	}
	if f := row.Failures[0]; !strings.Contains(f.Message, "shrunk from ") || !strings.Contains(f.Trail[0], "history=h1.") {
		t.Fatalf("the first failure is not the shrunk history: %s\n%q", f.Message, f.Trail[:1])
	}
	for i := range 5 {
		again := runReport(t, 1, "reproduce", tok)
		r := exploreRowOf(t, again)
		if r.Status != reports.StatusFailed || again.Store != "canary:ignore-token" || !strings.Contains(r.Output, "replayed twice: the store behaved") {
			t.Fatalf("reproduce %d: row %s on %q, output:\n%s", i+1, r.Status, again.Store, r.Output)
		}
		if !strings.Contains(r.Repro, ";history=h1.") {
			t.Errorf("reproduce %d: its repro %q lost the history", i+1, r.Repro)
		}
	}
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("%q does not hold %q", s, from)
	}
	out, _, ok := strings.Cut(rest, to)
	if !ok {
		t.Fatalf("%q does not close with %q", s, to)
	}
	return out
}

// TestExploreCommandWritesReports runs a campaign of 40 histories, three
// at a time: it passes, with a final live line and reports that say so.
// Bad input exits 2.
func TestExploreCommandWritesReports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, "explore", "--histories", "40", "--seed", "9", "--explore-parallel", "3", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "40 histories, 3 at once)") {
		t.Errorf("the header does not say how many histories play at once:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "explore: 40/40 histories") || !strings.Contains(r.stdout, "0 findings") {
		t.Errorf("no final live line:\n%s", r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Seed != 9 || exploreRowOf(t, run).Status != reports.StatusPassed || !strings.Contains(exploreRowOf(t, run).Output, "explored 40 histories") {
		t.Errorf("report: seed %d, row %+v", run.Seed, exploreRowOf(t, run))
	}
	for _, args := range [][]string{{"explore", "--histories", "0"}, {"explore", "stray"}, {"explore", "--store", "mongo:x"},
		{"explore", "--explore-parallel", "0"}, {"run", "--explore-parallel", "65"}} {
		if r := conform(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// TestExploreTimeBudget runs a campaign for a wall-time budget of 2s:
// it ends by itself at the budget, passes, and its report says how many
// histories it played and that the time budget ended it. Both budgets at
// once, a budget under a second, and a budget with shards are refused.
func TestExploreTimeBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, "explore", "--budget", "2s", "--seed", "9", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`explore: [0-9]+ histories in [0-9]+s of 2s \(`).MatchString(r.stdout) || !strings.Contains(r.stdout, "histories for 2s") {
		t.Errorf("the live line or header does not show the time budget:\n%s", r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	row := exploreRowOf(t, run)
	if row.Status != reports.StatusPassed || !strings.Contains(row.Output, "at the end of the time budget") || run.Explore == nil || run.Explore.Played < 1 || run.Explore.Played >= engine.MaxCampaign {
		t.Errorf("row %s, output:\n%s\nexploration %+v", row.Status, row.Output, run.Explore)
	}
	for _, args := range [][]string{{"explore", "--budget", "2s", "--histories", "50"}, {"explore", "--budget", "10ms"}, {"explore", "--budget", "1m", "--shard", "0/2", "--seed", "3"}, {"explore", "--budget", "soon"}} {
		if r := conform(t, args...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want 2 with one line\n%s", args, r.code, r.stderr)
		}
	}
}

// TestExploreInterruptWritesReports interrupts a campaign far longer than
// the test once its first live line is out: the reports are written, and
// the run is marked interrupted.
func TestExploreInterruptWritesReports(t *testing.T) {
	dir := t.TempDir()
	live := startLive(t, "explore", "--histories", "100000000", "--report-dir", dir)
	for {
		line, ok := live.next()
		if !ok || strings.HasPrefix(line, "explore: ") {
			break
		}
	}
	stdout := live.interruptExitsOne(t)
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("no report after an interrupt: %v\n%s", err, stdout)
	}
	if !run.Interrupted {
		t.Error("report.json does not mark the run interrupted")
	}
}

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/host"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// canaryCase is one deliberately broken store and what the chapter must
// say about it: exactly the rows in fails fail, each failure of such a row
// names one of the obligations listed for it, the bug's own obligation is
// named at least once, and every other row passes with nothing left
// unexercised.
type canaryCase struct {
	bugs string
	// ob is the obligation the bug breaks; some failure must name it.
	ob reports.ObligationID
	// fails maps each row that must fail to the obligations its failures
	// may name.
	fails map[reports.RowID][]reports.ObligationID
	// rowTimeout bounds each spec of the child's run (0: the default).
	rowTimeout time.Duration
	// settle is the child's settle bound (0: the default).
	settle time.Duration
	// notRun lists the rows that must not run because the store became
	// unavailable, each saying so.
	notRun []reports.RowID
	// explore marks a bug that no row can see, only exploration of fault
	// schedules (a hold or a crash at a site's second pass, say): the
	// chapter must pass it, and the case is the only one allowed to fail
	// no row while it names no row as not run.
	explore bool
}

// canaryCases is the table. Each expected row has a one-line reason.
var canaryCases = []canaryCase{
	{bugs: "correct"}, // the control: a correct store passes every row
	{bugs: "torn-batch", ob: chapter.ObAllOrNothing, fails: map[reports.RowID][]reports.ObligationID{
		"kill":     {chapter.ObAllOrNothing},                    // a crash or kill at commit-before-point leaves the batch in its first scope only
		"takeover": {chapter.ObAllOrNothing, chapter.ObFencing}, // held at commit-before-point: shows in its first scope only, the rest lands after the takeover with the old token
	}},
	{bugs: "lost-on-kill", ob: chapter.ObDurable, fails: map[reports.RowID][]reports.ObligationID{
		"reopen":         {chapter.ObDurable},                    // a batch answered Ok before a kill is gone in the next process
		"kill":           {chapter.ObDurable},                    // answer-lost and after-point kills lose a batch answered Ok
		"stale-fence":    {chapter.ObDurable},                    // the old writer's setup batch, answered Ok, is lost when it is fenced out
		"takeover":       {chapter.ObDurable, chapter.ObFencing}, // held at commit-after-point: a batch past its commit point is not visible after the acquire
		"same-version":   {chapter.ObDurable},                    // the low writer's setup batch, answered Ok, is lost when it is fenced out
		"retry":          {chapter.ObDurable},                    // "later", answered Ok, is lost with the killed writer
		"rows":           {chapter.ObListing, chapter.ObDurable}, // a new process still lists a scope whose delete was answered Ok
		"stalled-commit": {chapter.ObDurable},                    // the held commit, answered Ok, is not visible to another process
	}},
	{bugs: "retry-twice", ob: chapter.ObRetry, fails: map[reports.RowID][]reports.ObligationID{
		"kill":  {chapter.ObRetry}, // the writer settles an Indeterminate commit by retrying: the rows land twice
		"retry": {chapter.ObRetry}, // every resend of a landed commit id appends its rows again
	}},
	{bugs: "last-writer-wins", ob: chapter.ObVersionChain, fails: map[reports.RowID][]reports.ObligationID{
		"same-version": {chapter.ObVersionChain}, // the second batch for a version overwrites the first in one scope only
	}},
	{bugs: "ignore-token", ob: chapter.ObFencing, fails: map[reports.RowID][]reports.ObligationID{
		"stale-fence":  {chapter.ObFencing},      // a superseded writer's batch becomes visible
		"takeover":     {chapter.ObFencing},      // a commit held before its point lands after the takeover
		"same-version": {chapter.ObVersionChain}, // the lower token's batch, committed first, beats the higher one
	}},
	{bugs: "late-truncate", ob: chapter.ObRemoval, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObRemoval}, // the history's truncations show one batch late
		"rows":   {chapter.ObRemoval}, // truncate_after does not take effect with its batch
	}},
	{bugs: "reversed-append", ob: chapter.ObOrder, fails: map[reports.RowID][]reports.ObligationID{
		"reopen":   {chapter.ObOrder, chapter.ObRemoval}, // multi-row appends load in reverse order; truncations after them hide the permutation (F14)
		"kill":     {chapter.ObOrder},                    // the killed batch appends two rows
		"takeover": {chapter.ObOrder},                    // the held batch appends two rows
		"retry":    {chapter.ObOrder},                    // the retried batch appends two rows
		"rows":     {chapter.ObOrder},                    // the indices spec appends several rows at once
	}},
	{bugs: "realm-lock", ob: chapter.ObIndependence, fails: map[reports.RowID][]reports.ObligationID{
		"independence":   {chapter.ObIndependence}, // the burst queues behind the held commit
		"stalled-commit": {chapter.ObIndependence}, // a commit on another scope waits for the held one, at every site
	}},
	{bugs: "skip-last-listed", ob: chapter.ObListing, fails: map[reports.RowID][]reports.ObligationID{
		"reopen":       {chapter.ObListing}, // its listing pages skip a scope each
		"stale-fence":  {chapter.ObListing}, // so do the Mob listings
		"rows":         {chapter.ObListing}, // every listing spec
		"independence": {chapter.ObListing}, // the burst's Record listing
	}},
	{bugs: "renew-never-fenced", ob: chapter.ObFenceLease, fails: map[reports.RowID][]reports.ObligationID{
		"stale-fence": {chapter.ObFenceLease}, // a superseded holder's renew answers Ok
	}},
	{bugs: "exclusive-ignores-holder", ob: chapter.ObFenceLease, fails: map[reports.RowID][]reports.ObligationID{
		"acquire-empty": {chapter.ObFenceLease}, // a second exclusive acquire over a live holder does not answer Held
		"stale-fence":   {chapter.ObFenceLease}, // nor while the renewed holder is live
	}},
	{bugs: "no-renew-after-lapse", ob: chapter.ObFenceLease, fails: map[reports.RowID][]reports.ObligationID{
		"stale-fence": {chapter.ObFenceLease}, // the current holder's renew after a lapse is refused
	}},
	{bugs: "drop-renumbers", ob: chapter.ObRemoval, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObRemoval}, // the history's drops renumber the rows left
		"rows":   {chapter.ObRemoval}, // drop_before renumbers from 0
	}},
	{bugs: "read-below-start-ok", ob: chapter.ObOperations, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObOperations}, // a read below a dropped scope's first row answers rows
		"rows":   {chapter.ObOperations}, // the same after drop_before
	}},
	{bugs: "panics", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObErrors}, // every commit of the rows row panics; the run goes on to the next rows
	}},
	{bugs: "hangs", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"stale-fence": {chapter.ObErrors}, // LoadHead of its scopes never answers; the rows after it pass
	}},
	{bugs: "hangs-commit", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObErrors}, // the realm's eighth commit, in its history, never answers; the realm serves on, so the rows after it pass
	}},
	// The server goes away at the realm's eighth commit, in reopen's
	// history: no obligation is broken, the rows from there on do not run.
	{bugs: "outage", notRun: []reports.RowID{"reopen", "kill", "stale-fence", "takeover", "same-version", "retry", "rows", "independence", "stalled-commit"}},
	// Every batch over two scopes from the realm's eighth commit on never
	// answers, while reads are served: the probe after reopen's hang
	// commits two scopes too, finds that it hangs, and the rows after it
	// do not run.
	{bugs: "stuck-commits", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObErrors}, // a batch of its history never answers
	}, notRun: []reports.RowID{"kill", "stale-fence", "takeover", "same-version", "retry", "rows", "independence", "stalled-commit"}},
	{bugs: "empty-on-ended-context", ob: chapter.ObOperations, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObOperations, chapter.ObListing}, // a load, a read and a listing under an ended context answer nothing, without an error
	}},
	{bugs: "hangs-on-ended-context", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"kill": {chapter.ObErrors}, // a commit whose context ended never answers
	}},
	{bugs: "ok-on-ended-context", ob: chapter.ObDurable, fails: map[reports.RowID][]reports.ObligationID{
		"kill": {chapter.ObDurable}, // Ok to a commit whose context ended before the call, or while held before the commit point; nothing landed
	}},
	// From the realm's eighth commit on, each commit keeps its first
	// scope's lock: the probe after reopen's hang creates two scopes, then
	// updates them, hangs there, and the rows after it do not run.
	{bugs: "leaks-scope-lock", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObErrors}, // a later commit of a scope its history committed never answers
	}, notRun: []reports.RowID{"kill", "stale-fence", "takeover", "same-version", "retry", "rows", "independence", "stalled-commit"}},
	{bugs: "unknown-error", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"acquire-empty": {chapter.ObErrors}, // listing Identity answers an error outside the six types
		"reopen":        {chapter.ObErrors}, // so does its Identity listing
		"rows":          {chapter.ObErrors}, // and the listing spec's
	}},
	{bugs: "listed-after-delete", ob: chapter.ObListing, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObListing}, // its history deletes scopes that stay listed
		"rows":   {chapter.ObListing}, // the removal and listing specs delete scopes
	}},
	{bugs: "apply-as-checked", ob: chapter.ObAllOrNothing, fails: map[reports.RowID][]reports.ObligationID{
		"same-version": {chapter.ObAllOrNothing}, // the twin refused with Conflict in its second scope stays applied in its first
	}},
	{bugs: "unavailable-after-apply", ob: chapter.ObErrors, fails: map[reports.RowID][]reports.ObligationID{
		"reopen": {chapter.ObErrors}, // its commits answer Unavailable after they were applied
	}},
	{bugs: "utf16-order", ob: chapter.ObListing, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObListing}, // names in U+E000..U+FFFF and above U+FFFF list in the wrong order
	}},
	{bugs: "dirty-read", ob: chapter.ObFencing, fails: map[reports.RowID][]reports.ObligationID{
		"kill":     {chapter.ObAllOrNothing}, // a load while the commit is held shows it; killed, it never lands
		"takeover": {chapter.ObFencing},      // a load while the old commit is held before its point shows a batch that never lands
	}},
	{bugs: "read-ignores-limit", ob: chapter.ObOperations, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObOperations}, // the limit reads answer every row left, over their limit
	}},
	{bugs: "create-over-existing", ob: chapter.ObVersionChain, fails: map[reports.RowID][]reports.ObligationID{
		"same-version": {chapter.ObVersionChain}, // the second create of a name lands over the first, which stays in its other scope
	}},
	{bugs: "next-after-full-page", ob: chapter.ObListing, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObListing}, // a next cursor after an exactly full last page goes back into the page
	}},
	// The site's second pass comes after the batch is published; the rows
	// hold and crash only a site's first pass, so they see a correct store.
	{bugs: "site-twice-publish", explore: true},
	{bugs: "pad-space", ob: chapter.ObDurable, fails: map[reports.RowID][]reports.ObligationID{
		"rows": {chapter.ObDurable, chapter.ObListing, chapter.ObOperations}, // "a" and "a " are one scope: creating "a " overwrites "a"
	}},
}

// canarySeed is the seed of every canary run, unless envCanarySeed is set
// in the parent's environment.
const canarySeed = 20240611

// TestCanaries runs the chapter over each canary in its own child process
// and checks that the chapter fails exactly the rows the canary's bug
// breaks, under the obligations it breaks.
func TestCanaries(t *testing.T) {
	if os.Getenv(envCanary) != "" {
		t.Skip("a child process runs only TestCanaryChild")
	}
	seed := parentSeed(t)
	for _, c := range canaryCases {
		t.Run(c.bugs, func(t *testing.T) {
			t.Parallel()
			run := runChild(t, c.bugs, seed, c.rowTimeout, c.settle)
			checkCanary(t, c, run)
		})
	}
}

// TestCanaryStability runs the correct canary and the reference store
// several times, with different seeds, each in its own child: every run
// must pass every row. CONFORM_CANARY_REPEAT sets how many times (3 by
// default; 20 for a flake hunt).
func TestCanaryStability(t *testing.T) {
	if os.Getenv(envCanary) != "" {
		t.Skip("a child process runs only TestCanaryChild")
	}
	repeat := 3
	if s := os.Getenv("CONFORM_CANARY_REPEAT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CONFORM_CANARY_REPEAT=%q is not a positive number", s)
		}
		repeat = n
	}
	seed := parentSeed(t)
	for _, name := range []string{"correct", referenceName} {
		for i := 0; i < repeat; i++ {
			s := seed + uint64(i)*7919
			t.Run(fmt.Sprintf("%s/seed=%d", name, s), func(t *testing.T) {
				t.Parallel()
				checkCanary(t, canaryCase{bugs: name}, runChild(t, name, s, 0, 0))
			})
		}
	}
}

func parentSeed(t *testing.T) uint64 {
	s := os.Getenv(envCanarySeed)
	if s == "" {
		return canarySeed
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", envCanarySeed, s, err)
	}
	return n
}

// runChild runs the chapter over the store name in a child process (this
// test binary, running TestCanaryChild) and returns the run's report. The
// child exits non-zero when rows fail; only a missing or unreadable report
// is an error here.
func runChild(t *testing.T, name string, seed uint64, rowTimeout, settle time.Duration) *reports.Run {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCanaryChild$", "-test.count=1", "-test.timeout=3m")
	cmd.Env = childEnv(name, dir, seed, rowTimeout, settle)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("child %s could not run: %v", name, err)
	}
	f, ferr := os.Open(filepath.Join(dir, "report.json"))
	if ferr != nil {
		t.Fatalf("child %s (%v) left no report: %v\n%s", name, err, ferr, tail(out, 4000))
	}
	defer f.Close()
	run, rerr := reports.ReadJSON(f)
	if rerr != nil {
		t.Fatalf("child %s: reading its report: %v", name, rerr)
	}
	t.Logf("child %s, seed %d: exit %v in %s", name, seed, err, time.Since(start).Round(time.Millisecond))
	if run.Seed != seed || run.Store != "canary:"+name {
		t.Fatalf("the report is not this child's run: seed %d, store %q", run.Seed, run.Store)
	}
	if i := strings.Index(string(out), "WARNING: DATA RACE"); i >= 0 {
		t.Errorf("child %s: the race detector found a data race:\n%s", name, tail(out[i:], 6000))
	}
	if t.Failed() {
		t.Logf("child output:\n%s", tail(out, 4000))
	}
	return run
}

// childEnv is the parent's environment without any CONFORM_ setting (a
// CONFORM_REPRO or label filter would change what the child runs), plus
// the child's own.
func childEnv(name, dir string, seed uint64, rowTimeout, settle time.Duration) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONFORM_") {
			env = append(env, kv)
		}
	}
	env = append(env, envCanary+"="+name, envCanaryDir+"="+dir, envCanarySeed+"="+strconv.FormatUint(seed, 10))
	if rowTimeout > 0 {
		env = append(env, envCanaryRowTimeout+"="+rowTimeout.String())
	}
	if settle > 0 {
		env = append(env, envCanarySettle+"="+settle.String())
	}
	return env
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// checkCanary checks a run against its case: the host store chapter has
// every row; exactly the expected rows failed, each failure under an
// expected obligation and with a repro; the bug's obligation was named;
// every other row passed with nothing unexercised.
func checkCanary(t *testing.T, c canaryCase, run *reports.Run) {
	t.Helper()
	var ids []reports.RowID
	for _, r := range host.Rows() {
		ids = append(ids, r.ID)
	}
	seen := map[reports.RowID]bool{}
	named := false
	for _, row := range run.Rows {
		if row.Chapter != host.ID {
			continue // the child runs only the host store chapter
		}
		seen[row.ID] = true
		if slices.Contains(c.notRun, row.ID) {
			if row.Status != reports.StatusNotRun || !strings.Contains(strings.Join(row.NotExercised, " "), "the store became unavailable") {
				t.Errorf("row %s: want not run because the store became unavailable, got %s%s", row.ID, row.Status, describe(row))
			}
			continue
		}
		allowed, mustFail := c.fails[row.ID]
		if !mustFail {
			if !row.Certified() {
				t.Errorf("row %s/%s: want passed with everything exercised, got %s%s", row.Chapter, row.ID, row.Status, describe(row))
			}
			continue
		}
		if row.Status != reports.StatusFailed {
			t.Errorf("row %s: want failed (under %v), got %s%s", row.ID, allowed, row.Status, describe(row))
			continue
		}
		for _, f := range row.Failures {
			if f.Obligation == c.ob {
				named = true
			}
			if !slices.Contains(allowed, f.Obligation) {
				t.Errorf("row %s: a failure names %s, want one of %v: %s", row.ID, f.Obligation, allowed, clip(f.Message))
			}
		}
		if !strings.Contains(row.Repro, fmt.Sprintf("seed=%d", run.Seed)) || !strings.Contains(row.Repro, "row="+string(row.ID)) {
			t.Errorf("row %s: the repro %q does not name the run's seed and the row", row.ID, row.Repro)
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("the report has no row %s", id)
		}
	}
	for id := range c.fails {
		if !slices.Contains(ids, id) {
			t.Errorf("the case expects row %s to fail, but the chapter has no such row", id)
		}
	}
	if c.ob != "" && !named {
		t.Errorf("no failure names the bug's obligation %s", c.ob)
	}
}

func describe(row reports.Row) string {
	var sb strings.Builder
	for _, ne := range row.NotExercised {
		sb.WriteString("\n    not exercised: " + clip(ne))
	}
	for _, f := range row.Failures {
		sb.WriteString("\n    failure [" + string(f.Obligation) + "]: " + clip(f.Message))
	}
	return sb.String()
}

func clip(s string) string { return textsafe.Clip(strings.ReplaceAll(s, "\n", " "), 300) }

// TestCanaryTableCovers checks the table against the chapter: every row is
// failed by at least one canary, every obligation ob:1..ob:9 and ob:fence is
// the bug's obligation of at least one, and every bug of the canary package
// has a case. A bug's case fails a row or names rows not run, unless it is
// marked as found only by exploration, and then it does neither.
func TestCanaryTableCovers(t *testing.T) {
	rows := map[reports.RowID]bool{}
	obs := map[reports.ObligationID]bool{}
	cases := map[string]bool{}
	for _, c := range canaryCases {
		if cases[c.bugs] {
			t.Errorf("bug %s has two cases", c.bugs)
		}
		cases[c.bugs] = true
		obs[c.ob] = true
		for id := range c.fails {
			rows[id] = true
		}
		caught := len(c.fails) > 0 || len(c.notRun) > 0
		switch {
		case c.bugs == "correct" && (caught || c.explore):
			t.Errorf("the control case expects failures or exploration")
		case c.bugs != "correct" && c.explore && (caught || c.ob != ""):
			t.Errorf("bug %s is marked as found only by exploration, yet its case expects rows to fail or not run, or an obligation named", c.bugs)
		case c.bugs != "correct" && !c.explore && !caught:
			t.Errorf("bug %s fails no row: mark its case explore if only exploration finds it", c.bugs)
		}
	}
	for _, r := range host.Rows() {
		if !rows[r.ID] {
			t.Errorf("no canary fails row %s", r.ID)
		}
	}
	for _, ob := range []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObDurable, chapter.ObRetry, chapter.ObVersionChain, chapter.ObFencing, chapter.ObRemoval, chapter.ObOrder, chapter.ObIndependence, chapter.ObListing, chapter.ObFenceLease, chapter.ObErrors, chapter.ObOperations} {
		if !obs[ob] {
			t.Errorf("no canary breaks obligation %s", ob)
		}
	}
	for _, b := range allBugNames() {
		if !cases[b] {
			t.Errorf("bug %s has no canary case", b)
		}
	}
}

func allBugNames() []string {
	var out []string
	for _, b := range canary.AllBugs() {
		out = append(out, b.String())
	}
	return out
}

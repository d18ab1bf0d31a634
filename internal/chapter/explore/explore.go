// Package explore is the exploration chapter (label chapter:explore):
// randomized concurrent histories generated from the run's seed, played
// against fresh realms of the store and judged for linearizability
// against the reference Model and the fence rules (package
// internal/explore does the generating, playing and judging).
//
// The chapter has one row, explore-histories, with one spec. Its budget is
// counted in histories and operations, never in wall time, so a run is the
// same size on any machine: Settings.ExploreBudget() histories of at most
// MaxOps operations over at most MaxProcs processes each (a campaign may
// add a wall-time budget, Settings.ExploreFor). Each call is bounded by the
// run's per-call bound: a call that outlives it is a hang, which ends the
// history and the run (every later history would hang too). Every history
// that fails its check becomes a structured failure naming the obligation,
// what the contract allows and what the store showed, with the history as
// the trail and a repro line that names the seed and the history's index
// (hist=N), which plays that history alone.
//
// When the row fails, the chapter shrinks the simplest failed history
// (explore.Shrink, within ShrinkReplays replays) and the row's repro
// carries the shrunk history itself (history=h1…, explore.EncodeRepro).
// Reproducing it replays that history exactly, twice on fresh realms
// (explore.ReplayTwice), and says whether the store behaved the same both
// times; it does not regenerate the history from its seed, which a
// history of several processes need not follow the same way twice. A
// repro with hist=N alone (a shrink that did not reproduce the failure,
// or a shrunk history too long for a repro) regenerates and plays it up
// to Replays times, as before.
//
// A pass is never vacuous: the chapter counts what the histories reached
// (explore.Items: every operation by answer, the error types, the kills
// and crashes by the moment they hit, same-scope races, resends by the
// fate of the first send) and reports each item it never reached as not
// exercised.
package explore

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reports"
)

// ID is the chapter's name and label.
const ID reports.ChapterID = "explore"

// Title is the chapter's title in the reports.
const Title = "Exploration chapter"

// RowID is the ID of the chapter's one row.
const RowID reports.RowID = "explore-histories"

// The chapter's budget.
const (
	// DefaultHistories is the number of histories a run plays when the
	// chapter is turned on without a number (harness.WithExplore(0)).
	DefaultHistories = settings.DefaultExploreHistories
	// MaxOps bounds the operations of one history.
	MaxOps = 200
	// MaxProcs bounds the concurrent processes of one history.
	MaxProcs = 4
	// Replays is how often a repro plays its one history before it gives
	// up: the interleaving of the processes is the scheduler's, so one
	// play may take another path than the one that failed (a history of
	// one process takes the same path every time; one of several may
	// fail in a few plays of a hundred).
	Replays = 100
	// shrinkTries is how many of the simplest failed histories the row
	// tries to shrink, one after the other, until one shrinks.
	shrinkTries = 3
	// ShrinkReplays bounds the shrink of the simplest failed history, in
	// replays (never wall time), so that a run ends in the same place on
	// any machine.
	ShrinkReplays = 300
	// maxHistory bounds the encoded shrunk history a repro carries
	// (history=h1…); a longer one is left out, and the repro names the
	// history by its number alone (hist=N).
	maxHistory = 4096
	// maxFailures bounds the failures one run reports in full; the rest
	// are counted.
	maxFailures = 5
)

// checkBound bounds the check of one history; a history whose check runs
// out of it is undecided, and reported as not exercised.
const checkBound = 20 * time.Second

// Obligations are the obligations the row checks: all nine, the fence
// leases, the operations and the error contract.
var Obligations = []reports.ObligationID{
	chapter.ObAllOrNothing, chapter.ObDurable, chapter.ObRetry, chapter.ObVersionChain, chapter.ObFencing,
	chapter.ObRemoval, chapter.ObOrder, chapter.ObIndependence, chapter.ObListing,
	chapter.ObFenceLease, chapter.ObOperations, chapter.ObErrors,
}

// specText is the text of the row's one spec.
const specText = "randomized concurrent histories, each over a fresh realm with kills and in-store crashes, are linearizable against the reference model, and reach every coverage item"

// Chapter returns the exploration chapter. A run includes it only when
// its config turns it on (Settings.ExploreOn).
func Chapter() chapter.Chapter {
	return chapter.Chapter{
		ID:       ID,
		Title:    Title,
		Rows:     Rows,
		Register: register,
		Runs:     func(cfg chapter.Config) bool { return cfg.Settings.ExploreOn() },
	}
}

// Rows returns the chapter's one row. Its Specs only describe the spec,
// for listing and selection; the chapter registers it itself.
func Rows() []*chapter.Row {
	return []*chapter.Row{{
		ID:          RowID,
		Name:        "Randomized concurrent histories, judged against the model",
		Obligations: Obligations,
		Specs:       func(s *chapter.Specs) { s.It(specText, Obligations, nil) },
	}}
}

// register registers the chapter's spec for cfg.
func register(t *spec.Tree, cfg chapter.Config) {
	row := Rows()[0]
	labels := []string{row.ID.Label()}
	for _, o := range row.Obligations {
		labels = append(labels, string(o))
	}
	t.Describe(Title, chapter.Decorators(t, ID), func() {
		t.Describe(row.Name, spec.Opts{}, func() {
			t.It(specText, spec.Opts{Labels: labels}, func(ctx context.Context) {
				if cfg.Timing != nil {
					if why := cfg.Timing.Down(); why != "" {
						spec.From(ctx).NotRun(why)
					}
				}
				explore(ctx, cfg)
			})
		})
	})
}

// Outcome is what a run of the chapter found: what ran, what it reached,
// and every history that failed.
type Outcome struct {
	// Played counts the histories played and judged (a replay counts
	// each play of its one history).
	Played int
	// Coverage is what the histories reached.
	Coverage xp.Coverage
	// Undecided counts the histories whose check ran out of its bound.
	Undecided int
	// Failed holds every history with a finding, in run order.
	Failed []xp.HistoryFinding
	// Replay is set when the run played one history alone (a repro).
	Replay bool
	// Stopped is set when the run's context ended before its budget.
	Stopped bool
	// TimeUp is set when the run ended at the end of its wall-time budget
	// (Settings.ExploreFor), before it played every history.
	TimeUp bool
	// Hung is set when the run stopped at a history with a hang
	// (History.Hang): a store that ignores a call's context would hang
	// every later history too.
	Hung bool
	// Panicked is set when the run stopped at a history in which the
	// store panicked.
	Panicked bool
	// Seeds are the seeds of the budget's histories played, in play order.
	Seeds []uint64
	// Replayed are the histories replayed from a ledger, each with
	// whether it failed again; Ledger holds them by seed.
	Replayed []reports.LedgerEntry
	Ledger   map[uint64]reports.LedgerEntry
}

// Play plays the histories cfg.Settings name against fresh realms from
// cfg.NewRealm and judges each, calling Settings.ExploreProgress after each:
// the ledger's histories first, then the budget's, of its shard only
// (plan). A replay (Settings.ExploreHist) plays its history up to Replays
// times and stops at the first failure. It returns an error only when a realm
// cannot be made or opened, with what ran before.
//
// With Settings.ExploreParallel above 1, that many histories play at once,
// each over its own realm; a replay plays one at a time. Histories are
// judged and recorded in plan order all the same, and the run stops at
// the same history as one at a time would (a hang, a panic, a replay's
// failure, the end of ctx): the histories still playing past it are
// cancelled and not counted. cfg.NewRealm and the realms' Close are
// called one at a time.
func Play(ctx context.Context, cfg chapter.Config) (Outcome, error) {
	x := cfg.Settings
	out := Outcome{Replay: x.ExploreHist != nil}
	n, todo := plan(x)
	var until time.Time
	if x.ExploreFor > 0 {
		until = time.Now().Add(x.ExploreFor)
	}
	workers := max(1, x.ExploreParallel)
	if out.Replay {
		workers = 1
	}
	pctx, stop := context.WithCancel(ctx)
	jobs := make(chan job)
	results := make(chan played)
	var timeUp atomic.Bool
	go func() {
		defer close(jobs)
		seq := 0
		for p := range todo {
			if pctx.Err() != nil {
				return
			}
			if p.ledger == nil && !until.IsZero() && !time.Now().Before(until) {
				timeUp.Store(true)
				return
			}
			select {
			case jobs <- job{seq: seq, p: p}:
				seq++
			case <-pctx.Done():
				return
			}
		}
	}()
	var realmMu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := playOne(pctx, cfg, j, &realmMu)
				select {
				case results <- r:
				case <-pctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	defer func() {
		stop()
		for range results {
			// Drain: every worker has closed its realm once results closes.
		}
	}()

	next := 0
	pending := map[int]played{}
	for r := range results {
		pending[r.seq] = r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if done, err := out.judge(ctx, cfg, n, r); done || err != nil {
				return out, err
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		out.Stopped = true
	case timeUp.Load():
		out.TimeUp = true
	}
	return out, nil
}

// job is one planned history, seq its place in the plan.
type job struct {
	seq int
	p   planned
}

// played is what playing a job gave: the history and its verdict, or why
// there is none.
type played struct {
	job
	h   *xp.History
	v   xp.Verdict
	err error
	// cut is set when the run's context ended while the history played:
	// its calls were cancelled, so it judges nothing.
	cut bool
}

// playOne makes a realm (under realmMu), plays j's history on it,
// closes the realm (under realmMu) unless the run keeps its realms, and
// checks the history, so that histories playing at once are also judged
// at once.
func playOne(ctx context.Context, cfg chapter.Config, j job, realmMu *sync.Mutex) played {
	r := played{job: j}
	i, seed := j.p.index, j.p.seed
	realmMu.Lock()
	realm, err := cfg.NewRealm(ctx)
	realmMu.Unlock()
	if err != nil {
		r.err = fmt.Errorf("history %d: a new realm: %w", i, err)
		return r
	}
	r.h, err = xp.Play(ctx, realm, seed, playConfig(cfg))
	if c, ok := realm.(io.Closer); ok && !cfg.Settings.KeepRealms {
		realmMu.Lock()
		cerr := c.Close()
		realmMu.Unlock()
		if cerr != nil && cfg.Warn != nil {
			cfg.Warn(fmt.Sprintf("closing the realm of exploration history %d: %v", i, cerr))
		}
	}
	if err != nil {
		r.err = fmt.Errorf("history %d (seed %d): %w", i, seed, err)
		return r
	}
	if r.cut = ctx.Err() != nil; !r.cut {
		r.v = xp.Check(r.h, xp.CheckConfig{Timeout: checkBound})
	}
	return r
}

// judge takes one played and checked history, in plan order, records it
// in o and reports progress. It returns done when the run ends with it,
// and the error of a history that could not be played.
func (o *Outcome) judge(ctx context.Context, cfg chapter.Config, n int, r played) (done bool, err error) {
	x := cfg.Settings
	if r.err != nil {
		return true, r.err
	}
	if r.cut || ctx.Err() != nil {
		o.Stopped = true
		return true, nil
	}
	p, h, v := r.p, r.h, r.v
	i, seed := p.index, p.seed
	o.Played++
	o.Coverage.Add(h)
	if v.Result == xp.Undecided {
		o.Undecided++
	}
	headline := ""
	var failed *xp.HistoryFinding
	if len(v.Findings) > 0 {
		failed = &xp.HistoryFinding{Index: i, Seed: seed, Findings: v.Findings, History: h}
		o.Failed = append(o.Failed, *failed)
	}
	replayed := o.record(p, failed)
	if failed != nil {
		headline = fmt.Sprintf("history %d: %s", i, v.Findings[0])
		if p.ledger != nil {
			headline = "replayed from the ledger: " + headline
		}
		if rl := reproOf(cfg, *o, *failed); rl != "" {
			headline += "\n  repro: " + rl
		}
	}
	if x.ExploreProgress != nil {
		x.ExploreProgress(chapter.ExploreStatus{Histories: o.Played, Of: n, Ops: o.Coverage.Ops,
			Reached: o.Coverage.Reached(), Items: len(xp.Items()), Findings: len(o.Failed), Finding: headline, Replayed: replayed})
	}
	switch {
	case o.Replay && len(o.Failed) > 0:
		return true, nil
	case h.Hang != nil:
		// Every later history would hang again, each for a bound.
		o.Hung = true
		return true, nil
	case h.Panicked():
		// A store that panics would have killed the process it runs
		// in: the run ends with it.
		o.Panicked = true
		return true, nil
	}
	return false, nil
}

// playConfig returns the configuration histories play under: the run's
// injector, and the per-call bounds of the run's Timing, fed by the
// histories' own latencies.
func playConfig(cfg chapter.Config) xp.Config {
	c := xp.Config{MaxOps: MaxOps, MaxProcs: MaxProcs, Injector: cfg.Injector}
	if t := cfg.Timing; t != nil {
		c.CallBound = func(op xp.Op) time.Duration {
			d, _ := t.CallBound(xp.OpTitle(op))
			return d
		}
		c.Observe = func(op xp.Op, took time.Duration) { t.Observe(xp.OpTitle(op), took) }
	}
	return c
}

// explore is the row's spec: it plays the histories, writes the coverage
// to the row's output, and reports the failures, or else every coverage
// item not reached as not exercised. A repro that carries a shrunk history
// (Settings.ExploreHistory) replays that history exactly instead (replayExact).
func explore(ctx context.Context, cfg chapter.Config) {
	if cfg.Settings.ExploreHistory != "" {
		replayExact(ctx, cfg)
		return
	}
	sp := spec.From(ctx)
	out, err := Play(ctx, cfg)
	fmt.Fprint(sp.Writer(), Summary(out))
	sp.SetExploration(Exploration(cfg, out))
	if err != nil && len(out.Failed) == 0 {
		f := reports.Failure{Obligation: chapter.ObErrors, Message: "exploration stopped: " + err.Error()}
		sp.AddFailure(f)
		spec.Fail(f.Message)
	}
	if len(out.Failed) > 0 {
		shown := Simplest(out.Failed)
		repro := reproOf(cfg, out, shown[0])
		shrunk, note := "", ""
		if !out.Replay && !out.Stopped && !out.Hung && !out.Panicked && ctx.Err() == nil {
			// The simplest failures first, until one shrinks: a history
			// of several processes need not fail again when replayed.
			for k, hf := range shown[:min(len(shown), shrinkTries)] {
				var small xp.HistoryFinding
				var n string
				small, shrunk, n = shrinkFinding(ctx, cfg, hf)
				if k == 0 || shrunk != "" {
					note = n
				}
				if shrunk == "" {
					continue
				}
				r := cfg.Settings.ReproHistory(RowID, hf.Index, shrunk)
				repro = r
				f := failureFor(cfg, out, small)
				f.Trail = FailureOf(small, r).Trail
				f.Message = fmt.Sprintf("history %d shrunk from %d to %d operations: %s", hf.Index, len(hf.History.Events), len(small.History.Events), f.Message)
				sp.AddFailure(f)
				break
			}
		}
		if repro != "" {
			sp.SetRepro(repro)
		}
		for _, hf := range shown[:min(len(shown), maxFailures)] {
			sp.AddFailure(failureFor(cfg, out, hf))
		}
		text := failText(out, shown[0], repro)
		if note != "" {
			text += "  " + note + "\n"
		}
		spec.Fail(text)
	}
	if out.Stopped {
		return // the run was interrupted: the runner reports the spec so
	}
	for _, why := range NotReached(out) {
		if why.InStore {
			sp.InStoreGap()
		}
		sp.NotExercised(why.Part + ": " + why.Why)
	}
}

// runConfig is the configuration replays and shrinks play under, with the
// run's injector.
func runConfig(cfg chapter.Config) xp.Config {
	return xp.Config{MaxOps: MaxOps, MaxProcs: MaxProcs, Check: xp.CheckConfig{Timeout: checkBound}, Injector: cfg.Injector}
}

// realms returns a maker of fresh realms from cfg, for Shrink and
// ReplayTwice, and what closes every realm it made (unless the run keeps
// its realms).
func realms(ctx context.Context, cfg chapter.Config) (func() (hoststore.HostStoreFactory, error), func()) {
	var made []hoststore.HostStoreFactory
	return func() (hoststore.HostStoreFactory, error) {
			r, err := cfg.NewRealm(ctx)
			if err == nil {
				made = append(made, r)
			}
			return r, err
		}, func() {
			if cfg.Settings.KeepRealms {
				return
			}
			for _, r := range made {
				if c, ok := r.(io.Closer); ok {
					if err := c.Close(); err != nil && cfg.Warn != nil {
						cfg.Warn(fmt.Sprintf("closing a realm of an exploration replay: %v", err))
					}
				}
			}
		}
}

// shrinkFinding shrinks hf within ShrinkReplays replays and returns the
// shrunk finding, its encoding for a repro (empty when the shrink did not
// reproduce the finding, or the encoding is longer than maxHistory), and
// a line for the failure message that says what the shrink did.
func shrinkFinding(ctx context.Context, cfg chapter.Config, hf xp.HistoryFinding) (xp.HistoryFinding, string, string) {
	newRealm, closeAll := realms(ctx, cfg)
	defer closeAll()
	small, st, err := xp.Shrink(ctx, newRealm, hf, xp.ShrinkConfig{Replays: ShrinkReplays, Run: runConfig(cfg)})
	switch {
	case err != nil:
		return hf, "", fmt.Sprintf("not shrunk: %v", err)
	case !st.Reproduced:
		return hf, "", fmt.Sprintf("not shrunk: %d replays of history %d did not fail %s again; the repro regenerates it from its seed", st.Replays, hf.Index, st.Obligation)
	}
	enc, err := xp.EncodeRepro(small.History)
	if err != nil {
		return hf, "", fmt.Sprintf("shrunk from %d to %d operations, but not encoded: %v", st.From, st.To, err)
	}
	note := fmt.Sprintf("shrunk from %d to %d operations (%d replays", st.From, st.To, st.Replays)
	if st.Exhausted {
		note += ", the budget ran out"
	}
	note += ")"
	if len(enc) > maxHistory {
		return small, "", note + fmt.Sprintf("; its encoding is %d bytes, over %d, so the repro regenerates it from its seed", len(enc), maxHistory)
	}
	return small, enc, note + "; the repro replays the shrunk history exactly"
}

// replayExact replays the shrunk history Settings.ExploreHistory twice, on
// fresh realms, judges both, and fails the row when either replay fails.
func replayExact(ctx context.Context, cfg chapter.Config) {
	idx := -1
	if cfg.Settings.ExploreHist != nil {
		idx = *cfg.Settings.ExploreHist
	}
	sp := spec.From(ctx)
	fail := func(msg string) {
		f := reports.Failure{Obligation: chapter.ObErrors, Message: msg}
		sp.AddFailure(f)
		spec.Fail(msg)
	}
	h, err := xp.DecodeRepro(cfg.Settings.ExploreHistory)
	if err != nil {
		fail("the repro's history: " + err.Error())
		return
	}
	newRealm, closeAll := realms(ctx, cfg)
	defer closeAll()
	t, err := xp.ReplayTwice(ctx, newRealm, h, runConfig(cfg))
	if err != nil {
		fail("replaying the repro's history: " + err.Error())
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "the repro's history: %d processes, %d operations, replayed exactly on two fresh realms\n", h.Procs, len(h.Events))
	if t.Same {
		sb.WriteString("replayed twice: the store behaved the same both times\n")
	} else {
		sb.WriteString("replayed twice: the store behaved differently: " + t.Diff + "\n")
	}
	for i, v := range t.Verdicts {
		fmt.Fprintf(&sb, "replay %d: %s, %d findings\n", i+1, v.Result, len(v.Findings))
		for _, f := range v.Findings {
			fmt.Fprintf(&sb, "  %s\n", f)
		}
	}
	fmt.Fprint(sp.Writer(), sb.String())
	repro := cfg.Settings.ReproHistory(RowID, idx, cfg.Settings.ExploreHistory)
	failed := false
	for i, v := range t.Verdicts {
		if len(v.Findings) == 0 {
			continue
		}
		if !failed && repro != "" {
			sp.SetRepro(repro)
		}
		failed = true
		f := FailureOf(xp.HistoryFinding{Index: idx, Seed: h.Seed, Findings: v.Findings, History: t.Runs[i]}, repro)
		f.Message = fmt.Sprintf("replay %d of 2: %s", i+1, f.Message)
		sp.AddFailure(f)
	}
	if failed {
		first := t.Verdicts[0]
		if len(first.Findings) == 0 {
			first = t.Verdicts[1]
		}
		msg := fmt.Sprintf("[%s] the repro's history failed again when replayed: %s\n", first.Findings[0].Obligation, first.Findings[0])
		if t.Same {
			msg += "  replayed twice: the store behaved the same both times\n"
		} else {
			msg += "  replayed twice: the store behaved differently: " + t.Diff + "\n"
		}
		if repro != "" {
			msg += "  repro: " + repro + "\n"
		}
		spec.Fail(msg)
	}
	sp.NotExercised("coverage: a replay plays one shrunk history (twice here) and judges no coverage; run the chapter whole to certify")
}

// Gap is one part of the row not exercised, with why; InStore marks a
// part only a store that calls the in-store sites can reach.
type Gap struct {
	Part, Why string
	InStore   bool
}

// NotReached returns what a passing run leaves not exercised: every
// coverage item it never reached, the histories whose check was
// undecided, and, for a replay, the coverage it does not judge.
func NotReached(out Outcome) []Gap {
	var gaps []Gap
	if out.Replay {
		return []Gap{{Part: "coverage", Why: fmt.Sprintf("a replay plays one history (%d times here) and judges no coverage; run the chapter whole to certify", out.Played)}}
	}
	for _, it := range out.Coverage.Missing() {
		why := fmt.Sprintf("%d histories of %d operations never reached it", out.Played, out.Coverage.Ops)
		if it.InStore {
			why += " (the store never reached the in-store site)"
		}
		gaps = append(gaps, Gap{Part: "coverage item " + it.ID + " (" + it.What + ")", Why: why, InStore: it.InStore})
	}
	if out.Undecided > 0 {
		gaps = append(gaps, Gap{Part: "linearizability", Why: fmt.Sprintf("the check of %d of %d histories ran out of its bound of %s: undecided", out.Undecided, out.Played, checkBound)})
	}
	return gaps
}

// FailureOf returns the report's failure for one failed history: its
// first finding's obligation, message, want and got, the other findings
// in the message, and the history as the trail, headed by repro (the
// line that plays it alone) when not empty.
func FailureOf(hf xp.HistoryFinding, repro string) reports.Failure {
	first := hf.Findings[0]
	msg := fmt.Sprintf("history %d (seed %d, %d processes, %d operations), at #%d: %s", hf.Index, hf.Seed, hf.History.Procs, len(hf.History.Events), first.Event, first.Message)
	for _, f := range hf.Findings[1:] {
		msg += "; also " + f.String()
	}
	var trail []string
	if repro != "" {
		trail = append(trail, "replay this history alone: "+repro)
	}
	trail = append(trail, strings.Split(strings.TrimRight(hf.History.Text(), "\n"), "\n")...)
	return reports.Failure{Message: msg, Obligation: first.Obligation, Expected: first.Want, Got: first.Got, Trail: trail,
		Timeline: xp.TimelineOf(hf.History, first.Event)}
}

// Simplest returns the failed histories simplest first: fewest processes
// (a history of one process replays the same way every time), then
// fewest operations, then run order. The report shows the first few in
// full and the row's repro names the first.
func Simplest(failed []xp.HistoryFinding) []xp.HistoryFinding {
	out := slices.Clone(failed)
	slices.SortStableFunc(out, func(a, b xp.HistoryFinding) int {
		return cmp.Or(cmp.Compare(a.History.Procs, b.History.Procs), cmp.Compare(len(a.History.Events), len(b.History.Events)))
	})
	return out
}

// failText is the spec's failure message: how many histories failed and
// the simplest, hf, with its repro.
func failText(out Outcome, hf xp.HistoryFinding, repro string) string {
	f := hf.Findings[0]
	title := string(f.Obligation)
	if o, ok := chapter.Obligations.ByID(f.Obligation); ok {
		title += " " + o.Title
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%s] %d of %d histories failed; the simplest, history %d (seed %d, %d processes, %d operations): %s\n", title, len(out.Failed), out.Played, hf.Index, hf.Seed, hf.History.Procs, len(hf.History.Events), f)
	if len(out.Failed) > maxFailures {
		fmt.Fprintf(&sb, "  (the reports show the %d simplest in full)\n", maxFailures)
	}
	if repro != "" {
		fmt.Fprintf(&sb, "  repro: %s\n", repro)
	}
	return sb.String()
}

// Summary returns what a run played and reached, as the row's output
// shows it: the counts, the coverage table, and the failed histories.
func Summary(out Outcome) string {
	var sb strings.Builder
	what := "explored"
	if out.Replay {
		what = "replayed"
	}
	fmt.Fprintf(&sb, "%s %d histories (%d operations): %d failed, %d undecided", what, out.Played, out.Coverage.Ops, len(out.Failed), out.Undecided)
	if out.Stopped {
		sb.WriteString(", stopped before the end of the budget")
	}
	if out.Hung {
		sb.WriteString(", stopped at a hang")
	}
	if out.Panicked {
		sb.WriteString(", stopped at a panic of the store")
	}
	if out.TimeUp {
		sb.WriteString(", at the end of the time budget")
	}
	sb.WriteString("\n")
	sb.WriteString(out.Coverage.Text())
	for _, e := range out.Replayed {
		how := "passed"
		if e.Failed {
			how = "FAILED again"
		}
		fmt.Fprintf(&sb, "replayed from the ledger: history %d (seed %d): %s\n", e.Index, e.Seed, how)
	}
	for _, hf := range out.Failed {
		fmt.Fprintf(&sb, "failed: history %d (seed %d): %s\n", hf.Index, hf.Seed, hf.Findings[0])
	}
	return sb.String()
}

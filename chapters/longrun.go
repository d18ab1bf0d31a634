package chapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/writer"
)

// ChapterLongRun is the long-run chapter's name and label.
const ChapterLongRun = "long-run"

func init() {
	extraChapters = append(extraChapters, Chapter{ID: ChapterLongRun, Title: "Long-run chapter", Rows: LongRunRows, Register: LongRun})
}

// The shape of the chapter's scripted run.
const (
	lrRounds     = 5 // rounds in a run
	lrLaterRound = 3 // the round a fault hits after rounds were committed
)

// LongRun registers the long-run chapter for cfg: a scripted run of a
// writer (package writer) over the store, faulted at each chosen point of
// a round in turn (see LongRunRows). It answers true.
func LongRun(cfg Config) bool {
	return RegisterRows(cfg, ChapterLongRun, "Long-run chapter", LongRunRows())
}

// LongRunRows lists the long-run chapter's rows: the run undisturbed, then
// one row per chosen point of a round, each hit in round 1 (nothing
// committed yet) and in a later round. After every restart the row checks
// that the transcript so far equals the reference's (no round lost after
// its commit landed, none committed twice), that the run id is the same
// when a commit had landed and new when none had, and that no garbage
// chunk survived the open; and, all along, that the writer kept Core's
// writer rules (the observer).
func LongRunRows() []*Row { return longRunRows(writer.Unsafe{}) }

// lrEnd is how the faulted process's run must end.
type lrEnd int

const (
	endKilled    lrEnd = iota // the process dies at the point
	endCompletes              // the writer goes on and finishes the run
	endStopped                // superseded by a takeover: the realm stops for it
)

// lrFault is one chosen point of a round and what happens there.
type lrFault struct {
	id, name, what string
	obs            []string
	site           instore.Site // the in-store failpoint it needs ("": none)
	end            lrEnd
	arm            func(s *lrSpec, lp *labProc, d *lrDriver, k int)
}

func lrFaults() []lrFault {
	killObs := []string{ObRun, ObDurable, ObAllOrNothing, ObWriter}
	return []lrFault{
		{id: "before-model", name: "killed before the model call", what: "killed before the model call", obs: killObs, arm: killAt(ptBeforeModel)},
		{id: "after-model", name: "killed after the model call", what: "killed after the model call returned", obs: killObs, arm: killAt(ptAfterModel)},
		{id: "before-tool", name: "killed before a tool call", what: "killed right before a tool call starts", obs: killObs, arm: killAt(ptBeforeTool)},
		{id: "after-tool", name: "killed after a tool call", what: "killed after a tool call returned", obs: killObs, arm: killAt(ptAfterTool)},
		{id: "commit-held", name: "killed with the commit held in the store", what: "killed with the round's commit held inside the store", obs: killObs, site: instore.CommitBeforePoint, arm: armHeld},
		{id: "answer-lost", name: "killed with the commit's answer lost", what: "killed after the round's commit landed, its answer lost", obs: append(killObs, ObRetry), arm: armAnswerLost},
		{id: "after-landed", name: "killed after the commit landed", what: "killed after the round's commit landed", obs: killObs, arm: killAt(ptAfterCommit)},
		{id: "takeover", name: "taken over by another process", what: "taken over by another process before a tool call", obs: []string{ObWriter, ObFencing, ObRun}, end: endStopped, arm: armTakeover},
		{id: "renew-failed", name: "a renew fails", what: "a renew failing mid-round", obs: []string{ObWriter, ObRun}, end: endCompletes, arm: armRenewFails},
		{id: "paused", name: "paused past the self-fence window", what: "paused past its self-fence window before a tool call", obs: []string{ObWriter, ObRun}, end: endCompletes, arm: armPause},
		{id: "indeterminate", name: "the commit's answer is Indeterminate", what: "the round's commit answered Indeterminate after it landed, the process alive", obs: []string{ObWriter, ObRetry, ObRun}, end: endCompletes, arm: armIndeterminate},
	}
}

func longRunRows(unsafe writer.Unsafe) []*Row {
	base := &Row{ID: "long-run-undisturbed", Name: "Long run: undisturbed", Obligations: []string{ObRun, ObWriter}, DependsOn: "nothing: every spec runs over scopes of its own"}
	base.register = func(re *rowEnv) {
		re.It("a scripted run of many rounds commits the reference's transcript, and a new process finds it whole", base.Obligations, func(ctx context.Context, e *Env) {
			e.longRun(ctx, lrFault{end: endCompletes, arm: func(*lrSpec, *labProc, *lrDriver, int) {}}, 0, unsafe)
		})
	}
	rows := []*Row{base}
	for _, f := range lrFaults() {
		r := &Row{ID: "long-run-" + f.id, Name: "Long run: " + f.name, Obligations: f.obs, DependsOn: "nothing: every spec runs over scopes of its own"}
		r.register = func(re *rowEnv) {
			for _, k := range []int{1, lrLaterRound} {
				when := fmt.Sprintf("in round %d", k)
				if k == 1 {
					when += " (nothing committed before it)"
				}
				text := when + ": each restart continues the run under its run id, or runs the input again as a new run when nothing was committed, and the transcript equals the reference's"
				re.It(text, f.obs, func(ctx context.Context, e *Env) { e.longRun(ctx, f, k, unsafe) })
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// lrSpec is one spec of the chapter: the lab, the script and what the
// spec knows landed.
type lrSpec struct {
	l         *lab
	sc        *lrScript
	ref       []lrRound
	landed    int      // the last round whose commit the store answered Ok to
	landedRun string   // the run id it landed under
	runIDs    []string // the run ids of the processes so far
	rounds    int      // the rounds the last process found or committed
	waitHeld  func() bool
}

func (s *lrSpec) noteLanded(run string, k int) {
	if k > s.landed {
		s.landed, s.landedRun = k, run
	}
}

// start starts a process that opens its writer and finds its run, and
// checks what it found.
func (s *lrSpec) start(takeover bool) (*labProc, *lrDriver) {
	GinkgoHelper()
	lp := s.l.start(takeover)
	d := newLRDriver(s.l, lp, s.sc)
	s.afterOpen(d)
	s.runIDs = append(s.runIDs, d.runID)
	s.rounds = d.st.round
	d.onCommit = func(run string, k int) { s.noteLanded(run, k); s.rounds = k }
	return lp, d
}

// longRun is one spec: the run, faulted by f in round k, then restarted
// until it finished, then opened once more.
func (e *Env) longRun(ctx context.Context, f lrFault, k int, unsafe writer.Unsafe) {
	GinkgoHelper()
	if f.site != "" && !e.ProbeInStore(ctx, f.site) {
		e.NothingExercised(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", f.site))
	}
	began := time.Now()
	l := newLab(ctx, e, fmt.Sprintf("%s/k%d", e.rowID, k), unsafe)
	unit := l.timing.RenewInterval() / 5
	s := &lrSpec{l: l, sc: &lrScript{seed: e.Rand().Uint64(), rounds: lrRounds, unit: unit, mem: 1200, out: 1600}}
	s.ref = s.sc.reference()
	lp, d := s.start(false)
	f.arm(s, lp, d, k)
	err := d.run()
	if s.waitHeld != nil && !s.waitHeld() {
		e.NothingExercised(fmt.Sprintf("round %d's commit answered without reaching the in-store failpoint %s", k, f.site))
	}
	switch f.end {
	case endKilled:
		if !lp.dead {
			l.fail(ObRun, fmt.Sprintf("harness: the process was to be killed in round %d, but its run ended otherwise", k), "killed", okOr(err))
		}
	case endCompletes:
		if err != nil {
			l.fail(l.failOb(err), fmt.Sprintf("the writer did not go on after being %s in round %d", f.what, k), "the run finished", errText(err))
		}
	case endStopped:
		if !errors.Is(err, writer.ErrStopped) {
			l.fail(ObWriter, fmt.Sprintf("the superseded process's run ended with %s, not with its realm stopped", okOr(err)),
				"the realm stops for it (another process took the fence)", okOr(err))
		}
	}
	for i := 0; s.done() < lrRounds; i++ {
		if i == 3 {
			l.fail(ObRun, "the run did not finish after three restarts", fmt.Sprintf("%d rounds", lrRounds), fmt.Sprintf("%d rounds", s.done()))
		}
		lp, d := s.start(false)
		if err := d.run(); err != nil {
			l.fail(l.failOb(err), fmt.Sprintf("p%d could not go on with the run after a restart", lp.pid), "the run finished", errText(err))
		}
	}
	_, d = s.start(false)
	if d.st.round != lrRounds {
		l.fail(ObRun, "a new process does not find the finished run", fmt.Sprintf("round %d", lrRounds), fmt.Sprintf("round %d", d.st.round))
	}
	l.checkObserver()
	e.Note("spec done: %d processes, %s of run time on the clock, %s of wall time", len(l.procs), l.clock.Since(writer.ManualEpoch), time.Since(began).Round(time.Millisecond))
}

// done answers how many rounds the store holds for the run, as the last
// process found or made them.
func (s *lrSpec) done() int { return s.rounds }

// onceAt makes the driver run f the first time it reaches point pt of
// round k, and never again.
func onceAt(d *lrDriver, pt lrPoint, k int, f func() error) {
	fired := false
	d.hook = func(p lrPoint, at int) error {
		if p != pt || at != k || fired {
			return nil
		}
		fired = true
		return f()
	}
}

func killAt(pt lrPoint) func(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	return func(s *lrSpec, lp *labProc, d *lrDriver, k int) {
		onceAt(d, pt, k, func() error {
			lp.kill()
			return errScenarioKill
		})
	}
}

func armHeld(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	s.waitHeld = lp.holdRound(instore.CommitBeforePoint, func(b *hoststore.CommitBatch) bool {
		return s.l.isRoundBatch(b) && d.cur == k
	})
}

func armAnswerLost(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	fired := false
	lp.st.setHooks(func(st *obsStore) {
		st.afterCommit = func(b *hoststore.CommitBatch, err error) error {
			if fired || err != nil || !s.l.isRoundBatch(b) || d.cur != k {
				return err
			}
			fired = true
			s.noteLanded(d.runID, k)
			lp.kill()
			return faults.ErrKilled
		}
	})
}

func armIndeterminate(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	fired := false
	lp.st.setHooks(func(st *obsStore) {
		st.afterCommit = func(b *hoststore.CommitBatch, err error) error {
			if fired || err != nil || !s.l.isRoundBatch(b) || d.cur != k {
				return err
			}
			fired = true
			return &hoststore.IndeterminateError{Detail: "the store's answer was lost (injected by the chapter)"}
		}
	})
}

func armRenewFails(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	onceAt(d, ptAfterModel, k, func() error {
		failed := false
		lp.st.setHooks(func(st *obsStore) {
			st.beforeRenew = func() error {
				if failed {
					return nil
				}
				failed = true
				return &hoststore.UnavailableError{Detail: "the store cannot be reached (injected by the chapter)"}
			}
		})
		s.l.e.Note("the next renew of p%d fails; one renew interval passes", lp.pid)
		s.l.clock.Advance(s.l.timing.RenewInterval())
		return nil
	})
}

func armPause(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	onceAt(d, ptBeforeTool, k, func() error {
		s.l.e.Note("p%d pauses for its self-fence window, %s", lp.pid, s.l.timing.SelfFenceWindow())
		s.l.clock.Pause(s.l.timing.SelfFenceWindow())
		return nil
	})
}

func armTakeover(s *lrSpec, lp *labProc, d *lrDriver, k int) {
	onceAt(d, ptBeforeTool, k, func() error {
		s.l.e.Note("p%d waits before a tool call of round %d; another process takes over and runs on", lp.pid, k)
		nb, db := s.start(true)
		if err := db.run(); err != nil {
			s.l.fail(s.l.failOb(err), fmt.Sprintf("p%d, which took over, could not finish the run", nb.pid), "the run finished", errText(err))
		}
		nb.w.Close()
		s.l.e.Note("p%d goes on with its tool call", lp.pid)
		return nil
	})
}

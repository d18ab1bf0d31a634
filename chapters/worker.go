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

// ChapterWorker is the durable-worker chapter's name and label.
const ChapterWorker = "worker"

func init() {
	extraChapters = append(extraChapters, Chapter{ID: ChapterWorker, Title: "Durable-worker chapter", Rows: WorkerRows, Register: Worker})
}

// wkJobs is how many jobs a spec's worker takes.
const wkJobs = 3

// Worker registers the durable-worker chapter for cfg: a worker (over
// package writer) that takes jobs from Record scopes and commits each
// step's progress, killed at chosen points (see WorkerRows). It answers
// true.
func Worker(cfg Config) bool {
	return RegisterRows(cfg, ChapterWorker, "Durable-worker chapter", WorkerRows())
}

// WorkerRows lists the durable-worker chapter's rows: the worker
// undisturbed, then one row per chosen point, each hit at the first step
// of the first job (nothing committed yet) and at the last step of a later
// job. After every restart the row checks each job's committed state
// against the reference (no step lost after its commit landed, none
// committed twice, no committed step run again), that no garbage chunk
// survived the open, and, all along, Core's writer rules; at the end every
// job has finished exactly once.
func WorkerRows() []*Row { return workerRows(writer.Unsafe{}) }

// wkFault is one chosen point of the worker's work.
type wkFault struct {
	id, name, what string
	obs            []string
	site           instore.Site
	end            lrEnd
	arm            func(s *wkSpec, lp *labProc, d *wkDriver, j, n int)
}

func wkFaults() []wkFault {
	killObs := []string{ObRun, ObDurable, ObAllOrNothing, ObWriter}
	return []wkFault{
		{id: "before-step", name: "killed before a step", what: "killed before a step", obs: killObs, arm: wkKillAt(wpBeforeStep)},
		{id: "after-step", name: "killed after a step", what: "killed after a step ran, before its commit", obs: killObs, arm: wkKillAt(wpAfterStep)},
		{id: "commit-held", name: "killed with the commit held in the store", what: "killed with the step's commit held inside the store", obs: killObs, site: instore.CommitBeforePoint, arm: wkArmHeld},
		{id: "answer-lost", name: "killed with the commit's answer lost", what: "killed after the step's commit landed, its answer lost", obs: append(killObs, ObRetry), arm: wkArmAnswerLost},
		{id: "after-landed", name: "killed after the commit landed", what: "killed after the step's commit landed", obs: killObs, arm: wkKillAt(wpAfterCommit)},
		{id: "between-jobs", name: "killed between jobs", what: "killed after the job finished, before the next", obs: killObs, arm: wkKillAt(wpBetweenJobs)},
		{id: "takeover", name: "taken over by another process", what: "taken over by another worker before a step", obs: []string{ObWriter, ObFencing, ObRun}, end: endStopped, arm: wkArmTakeover},
		{id: "paused", name: "paused past the self-fence window", what: "paused past its self-fence window before a step", obs: []string{ObWriter, ObRun}, end: endCompletes, arm: wkArmPause},
	}
}

func workerRows(unsafe writer.Unsafe) []*Row {
	base := &Row{ID: "worker-undisturbed", Name: "Durable worker: undisturbed", Obligations: []string{ObRun, ObWriter}, DependsOn: "nothing: every spec runs over scopes of its own"}
	base.register = func(re *rowEnv) {
		re.It("a worker finishes every job once, as the reference does", base.Obligations, func(ctx context.Context, e *Env) {
			e.durableWorker(ctx, wkFault{end: endCompletes, arm: func(*wkSpec, *labProc, *wkDriver, int, int) {}}, 0, 0, unsafe)
		})
	}
	rows := []*Row{base}
	for _, f := range wkFaults() {
		r := &Row{ID: "worker-" + f.id, Name: "Durable worker: " + f.name, Obligations: f.obs, DependsOn: "nothing: every spec runs over scopes of its own"}
		r.register = func(re *rowEnv) {
			first, later := "at the first step of the first job (nothing committed before it)", "at the last step of job 2"
			if f.id == "between-jobs" {
				first, later = "after the first job finished", "after job 2 finished"
			}
			re.It(first+": every job finishes exactly once in the committed state", f.obs, func(ctx context.Context, e *Env) {
				e.durableWorker(ctx, f, 1, 1, unsafe)
			})
			re.It(later+": every job finishes exactly once in the committed state", f.obs, func(ctx context.Context, e *Env) {
				e.durableWorker(ctx, f, 2, -1, unsafe)
			})
		}
		rows = append(rows, r)
	}
	return rows
}

// wkSpec is one spec of the chapter.
type wkSpec struct {
	l        *lab
	sc       *wkScript
	ref      wkRef
	landed   map[[2]int]bool // steps whose commit the store answered Ok to
	waitHeld func() bool
	finished bool // the last worker found or left every job finished
}

func (s *wkSpec) noteLanded(j, n int) { s.landed[[2]int{j, n}] = true }

// start starts a worker and checks what it found.
func (s *wkSpec) start(takeover bool) (*labProc, *wkDriver) {
	GinkgoHelper()
	lp := s.l.start(takeover)
	d := &wkDriver{l: s.l, lp: lp, sc: s.sc}
	d.onCommit = func(j, n int) { s.noteLanded(j, n) }
	d.onStep = func(j, n int) {
		if s.landed[[2]int{j, n}] {
			s.l.fail(ObRun, fmt.Sprintf("p%d started step %d of job %d again, after its commit had landed", lp.pid, n, j),
				"a step whose commit landed never runs again", "it ran again")
		}
	}
	s.afterOpen(d)
	return lp, d
}

// durableWorker is one spec: jobs submitted, a worker faulted by f at step
// n of job j (n < 0: its last step), restarts until every job finished,
// then one more open.
func (e *Env) durableWorker(ctx context.Context, f wkFault, j, n int, unsafe writer.Unsafe) {
	GinkgoHelper()
	if f.site != "" && !e.ProbeInStore(ctx, f.site) {
		e.NothingExercised(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", f.site))
	}
	began := time.Now()
	l := newLab(ctx, e, fmt.Sprintf("%s/j%d", e.rowID, j), unsafe)
	s := &wkSpec{l: l, landed: map[[2]int]bool{},
		sc: &wkScript{lr: lrScript{seed: e.Rand().Uint64(), unit: l.timing.RenewInterval() / 5, out: 1500}, jobs: wkJobs}}
	s.ref = s.sc.reference()
	if n < 0 {
		n = s.sc.steps(j)
	}
	s.submit()
	lp, d := s.start(false)
	f.arm(s, lp, d, j, n)
	err := d.run()
	if s.waitHeld != nil && !s.waitHeld() {
		e.NothingExercised(fmt.Sprintf("the step's commit answered without reaching the in-store failpoint %s", f.site))
	}
	switch f.end {
	case endKilled:
		if !lp.dead {
			l.fail(ObRun, "harness: the worker was to be killed, but its work ended otherwise", "killed", okOr(err))
		}
	case endCompletes:
		if err != nil {
			l.fail(l.failOb(err), fmt.Sprintf("the worker did not go on after being %s", f.what), "every job finished", errText(err))
		}
		s.finished = true
	case endStopped:
		if !errors.Is(err, writer.ErrStopped) {
			l.fail(ObWriter, fmt.Sprintf("the superseded worker's work ended with %s, not with its realm stopped", okOr(err)),
				"the realm stops for it (another process took the fence)", okOr(err))
		}
	}
	for i := 0; !s.finished; i++ {
		if i == 3 {
			l.fail(ObRun, "the jobs did not finish after three restarts", "every job finished", "some unfinished")
		}
		lp, d := s.start(false)
		if err := d.run(); err != nil {
			l.fail(l.failOb(err), fmt.Sprintf("p%d could not go on with the jobs after a restart", lp.pid), "every job finished", errText(err))
		}
		s.finished = true
	}
	s.start(false)
	if !s.finished {
		l.fail(ObRun, "a new worker does not find every job finished", "every job finished", "some unfinished")
	}
	l.checkObserver()
	e.Note("spec done: %d processes, %s of clock time, %s of wall time", len(l.procs), l.clock.Since(writer.ManualEpoch), time.Since(began).Round(time.Millisecond))
}

// submit commits the jobs, from a process of its own that then stops.
func (s *wkSpec) submit() {
	GinkgoHelper()
	lp := s.l.start(false)
	var ups []writer.Update
	for j := 1; j <= s.sc.jobs; j++ {
		ups = append(ups, writer.Update{Scope: s.l.wkJob(j), Head: s.sc.initial(j).encode()})
	}
	if err := lp.w.Commit(s.l.ctx, ups...); err != nil {
		s.l.fail(s.l.failOb(err), "the jobs could not be submitted", "Ok", errText(err))
	}
	lp.w.Close()
}

// afterOpen checks what a restarted worker finds: each job's committed
// state and rows equal the reference's after the steps that landed, and
// no garbage chunk survived the open.
func (s *wkSpec) afterOpen(d *wkDriver) {
	GinkgoHelper()
	l, e := s.l, s.l.e
	q := e.MustOpen(l.ctx)
	defer q.Kill()
	all := true
	for j := 1; j <= s.sc.jobs; j++ {
		v, ok := l.value(q, l.wkJob(j))
		if !ok {
			l.fail(ObDurable, fmt.Sprintf("job %d's Record scope is gone", j), "the job", "no scope")
		}
		st, err := decodeWKState(v)
		if err != nil {
			l.fail(ObRun, fmt.Sprintf("job %d's head is not a job state", j), "a job state", err.Error())
		}
		for n := st.done + 1; n <= st.steps; n++ {
			if s.landed[[2]int{j, n}] {
				l.fail(ObDurable, fmt.Sprintf("step %d of job %d landed (the store answered Ok), yet p%d finds the job at step %d", n, j, d.lp.pid, st.done),
					fmt.Sprintf("at least step %d", n), fmt.Sprintf("step %d", st.done))
			}
		}
		ref := s.ref.states[j-1]
		if st.done > len(ref)-1 || st.steps != ref[0].steps || string(st.encode()) != string(ref[st.done].encode()) {
			l.fail(ObRun, fmt.Sprintf("job %d's state after step %d is not the reference's", j, st.done), fmt.Sprintf("%.120q", ref[min(st.done, len(ref)-1)].encode()), fmt.Sprintf("%.120q", v))
		}
		want := wkRowsUpTo(s.ref.rows[j-1], st.done, st.steps)
		rows := l.rows(q, l.wkJob(j))
		if dd := diffRows(want, rows); dd != "" {
			msg := fmt.Sprintf("job %d's rows after step %d are not the reference's", j, st.done)
			if len(rows) > len(want) {
				msg = fmt.Sprintf("job %d holds %d rows where %d were committed: a step was committed twice", j, len(rows), len(want))
			}
			l.failDiff(ObRun, msg, rowsText(want), rowsText(rows), dd)
		}
		all = all && st.done == st.steps
	}
	s.finished = all
	l.checkGarbage(q)
}

// wkRowsUpTo is a job's rows after step done: one per step, and the
// finished row once the last step is done.
func wkRowsUpTo(all [][]byte, done, steps int) []hoststore.Row {
	n := done
	if done == steps {
		n = done + 1
	}
	out := make([]hoststore.Row, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, hoststore.Row{Index: hoststore.RowIndex(i), Data: all[i]})
	}
	return out
}

func wkKillAt(pt wkPoint) func(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
	return func(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
		fired := false
		d.hook = func(p wkPoint, aj, an int) error {
			if p != pt || aj != j || (an != n && p != wpBetweenJobs) || fired {
				return nil
			}
			fired = true
			lp.kill()
			return errScenarioKill
		}
	}
}

func wkArmHeld(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
	s.waitHeld = lp.holdRound(instore.CommitBeforePoint, func(b *hoststore.CommitBatch) bool {
		return s.l.isJobBatch(b) && d.cur == [2]int{j, n}
	})
}

func wkArmAnswerLost(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
	fired := false
	lp.st.setHooks(func(st *obsStore) {
		st.afterCommit = func(b *hoststore.CommitBatch, err error) error {
			if fired || err != nil || !s.l.isJobBatch(b) || d.cur != [2]int{j, n} {
				return err
			}
			fired = true
			s.noteLanded(j, n)
			lp.kill()
			return faults.ErrKilled
		}
	})
}

func wkArmPause(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
	fired := false
	d.hook = func(p wkPoint, aj, an int) error {
		if p != wpBeforeStep || aj != j || an != n || fired {
			return nil
		}
		fired = true
		s.l.e.Note("p%d pauses for its self-fence window, %s", lp.pid, s.l.timing.SelfFenceWindow())
		s.l.clock.Pause(s.l.timing.SelfFenceWindow())
		return nil
	}
}

func wkArmTakeover(s *wkSpec, lp *labProc, d *wkDriver, j, n int) {
	fired := false
	d.hook = func(p wkPoint, aj, an int) error {
		if p != wpBeforeStep || aj != j || an != n || fired {
			return nil
		}
		fired = true
		s.l.e.Note("p%d waits before step %d of job %d; another worker takes over and works on", lp.pid, n, j)
		nb, db := s.start(true)
		if err := db.run(); err != nil {
			s.l.fail(s.l.failOb(err), fmt.Sprintf("p%d, which took over, could not finish the jobs", nb.pid), "every job finished", errText(err))
		}
		s.finished = true
		nb.w.Close()
		s.l.e.Note("p%d goes on with its step", lp.pid)
		return nil
	}
}

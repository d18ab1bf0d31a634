package worker

import (
	"fmt"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/scripted"
)

// afterOpen checks what a restarted worker finds: each job's committed
// state and rows equal the reference's after the steps that landed, and
// no garbage chunk survived the open.
func (s *work) afterOpen(d *driver) {
	spec.Helper()
	l, e := s.l, s.l.Env
	q := e.MustOpen(l.Ctx)
	defer q.Kill()
	all := true
	for j := 1; j <= s.sc.jobs; j++ {
		v, ok := l.Value(q, s.job(j))
		if !ok {
			l.Fail(chapter.ObDurable, fmt.Sprintf("job %d's Record scope is gone", j), "the job", "no scope")
		}
		st, err := decodeState(v)
		if err != nil {
			l.Fail(chapter.ObRun, fmt.Sprintf("job %d's head is not a job state", j), "a job state", err.Error())
		}
		for n := st.done + 1; n <= st.steps; n++ {
			if s.landed[scripted.Pos{Job: j, Step: n}] {
				l.Fail(chapter.ObDurable, fmt.Sprintf("step %d of job %d landed (the store answered Ok), yet p%d finds the job at step %d", n, j, d.p.PID, st.done),
					fmt.Sprintf("at least step %d", n), fmt.Sprintf("step %d", st.done))
			}
		}
		ref := s.ref.states[j-1]
		if st.done > len(ref)-1 || st.steps != ref[0].steps || string(st.encode()) != string(ref[st.done].encode()) {
			l.Fail(chapter.ObRun, fmt.Sprintf("job %d's state after step %d is not the reference's", j, st.done), fmt.Sprintf("%.120q", ref[min(st.done, len(ref)-1)].encode()), fmt.Sprintf("%.120q", v))
		}
		want := rowsUpTo(s.ref.rows[j-1], st.done, st.steps)
		rows := l.Rows(q, s.job(j))
		if dd := chapter.DiffRows(want, rows); dd != "" {
			msg := fmt.Sprintf("job %d's rows after step %d are not the reference's", j, st.done)
			if len(rows) > len(want) {
				msg = fmt.Sprintf("job %d holds %d rows where %d were committed: a step was committed twice", j, len(rows), len(want))
			}
			l.FailDiff(chapter.ObRun, msg, chapter.RowsText(want), chapter.RowsText(rows), dd)
		}
		all = all && st.done == st.steps
	}
	d.finished = all
	l.CheckGarbage(q)
}

// rowsUpTo is a job's rows after step done: one per step, and the
// finished row once the last step is done.
func rowsUpTo(all [][]byte, done, steps int) []hoststore.Row {
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

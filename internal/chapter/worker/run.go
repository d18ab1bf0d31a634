package worker

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/scripted"
	"github.com/conform-spi/conform/internal/writer"
)

// play is one spec: jobs submitted, a worker faulted by f at step n of
// job j (n < 0: its last step), restarts until every job finished, then
// one more open.
func play(ctx context.Context, e *chapter.Env, f scripted.Fault, j, n int, unsafe writer.Unsafe) {
	scripted.Play(ctx, e, f, fmt.Sprintf("j%d", j), unsafe, func(l *scripted.Lab) (scripted.Work, scripted.Pos) {
		w := &work{l: l, landed: map[scripted.Pos]bool{},
			sc: &script{seed: e.Rand().Uint64(), unit: l.Timing.RenewInterval() / 5, out: 1500, jobs: jobs}}
		w.ref = w.sc.reference()
		if n < 0 {
			n = w.sc.steps(j)
		}
		w.texts = scripted.Texts{
			Held:      "the step's commit",
			Proc:      "worker",
			Writer:    "worker",
			Work:      "work",
			Whole:     "the jobs",
			Finished:  "every job finished",
			Target:    "every job finished",
			NotFound:  "a new worker does not find every job finished",
			FoundWant: "every job finished",
			Clock:     "of clock time",
			Wait:      fmt.Sprintf("waits before step %d of job %d; another worker takes over and works on", n, j),
			GoOn:      "its step",
		}
		w.submit()
		return w, scripted.Pos{Job: j, Step: n}
	})
}

// work is the chapter's part of one spec: the jobs, their reference and
// the steps the spec knows landed.
type work struct {
	l      *scripted.Lab
	sc     *script
	ref    expected
	texts  scripted.Texts
	landed map[scripted.Pos]bool // steps whose commit the store answered Ok to
}

func (w *work) Texts() *scripted.Texts { return &w.texts }

func (w *work) Progress() string { return "some unfinished" }

func (w *work) job(j int) hoststore.ScopeRef {
	return w.l.Scope(hoststore.KindRecord, "job/"+strconv.Itoa(j))
}

// IsUnit tells whether b is a step's commit batch.
func (w *work) IsUnit(b *hoststore.CommitBatch) bool {
	for _, s := range b.Scopes() {
		if strings.HasPrefix(string(s.Name), w.l.Prefix+"/job/") {
			return true
		}
	}
	return false
}

// submit commits the jobs, from a process of its own that then stops.
func (w *work) submit() {
	spec.Helper()
	l := w.l
	p := w.l.Start(false)
	var ups []writer.Update
	for j := 1; j <= w.sc.jobs; j++ {
		ups = append(ups, writer.Update{Scope: w.job(j), Head: w.sc.initial(j).encode()})
	}
	if err := p.Writer.Commit(l.Ctx, ups...); err != nil {
		l.Fail(l.FailOb(err), "the jobs could not be submitted", "Ok", chapter.ErrText(err))
	}
	p.Writer.Close()
}

// Open starts p's driver and checks what p finds.
func (w *work) Open(p *scripted.Process) scripted.Driver {
	spec.Helper()
	d := &driver{w: w, p: p}
	w.afterOpen(d)
	return d
}

// driver is one worker process: it takes the jobs from their Record
// scopes in name order and commits each step's progress.
type driver struct {
	w        *work
	p        *scripted.Process
	finished bool // every job was finished when the worker opened
}

func (d *driver) Finished() bool { return d.finished }

func (d *driver) Found() string { return "some unfinished" }

func (d *driver) Landed(pos scripted.Pos) { d.w.landed[pos] = true }

// state loads job j's state through the worker's writer.
func (d *driver) state(j int) state {
	spec.Helper()
	l := d.w.l
	v, ok, err := d.p.Writer.Value(l.Ctx, d.w.job(j))
	if err != nil || !ok {
		l.Fail(chapter.ObRun, fmt.Sprintf("job %d's Record scope cannot be read", j), "the job", fmt.Sprintf("exists %v, %s", ok, chapter.OkOr(err)))
	}
	st, err := decodeState(v)
	if err != nil {
		l.Fail(chapter.ObRun, fmt.Sprintf("job %d's head is not a job state", j), "a job state", err.Error())
	}
	return st
}

// Run works every job to its end.
func (d *driver) Run() error {
	for j := 1; j <= d.w.sc.jobs; j++ {
		st := d.state(j)
		if st.done == st.steps {
			continue
		}
		for n := st.done + 1; n <= st.steps; n++ {
			name := fmt.Sprintf("job %d step %d", j, n)
			err := d.p.Unit(scripted.Pos{Job: j, Step: n}, name, "step", "at "+name, func() error {
				next, err := d.step(j, n, st)
				if err == nil {
					st = next
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		if err := d.p.At(betweenJobs); err != nil {
			return err
		}
	}
	return nil
}

// step runs step n of job j after its check and commits its progress.
func (d *driver) step(j, n int, st state) (state, error) {
	l, pid := d.w.l, d.p.PID
	pos := scripted.Pos{Job: j, Step: n}
	r := d.p.Writer.Round()
	if err := d.p.At(beforeStep); err != nil {
		return st, err
	}
	if err := r.Check(l.Ctx, writer.ToolCall); err != nil {
		return st, err
	}
	l.Called(pid, fmt.Sprintf("step %d of job %d", n, j))
	if d.w.landed[pos] {
		l.Fail(chapter.ObRun, fmt.Sprintf("p%d started step %d of job %d again, after its commit had landed", pid, n, j),
			"a step whose commit landed never runs again", "it ran again")
	}
	out, took := d.w.sc.step(j, n)
	l.Clock.Advance(took)
	if err := d.p.At(afterStep); err != nil {
		return st, err
	}
	next, rows := st.advance(j, n, out)
	if err := r.Commit(l.Ctx, writer.Update{Scope: d.w.job(j), Head: next.encode(), Append: rows}); err != nil {
		return st, err
	}
	l.Env.Note("p%d committed job %d step %d at %s", pid, j, n, l.Now())
	d.w.landed[pos] = true
	return next, d.p.At(afterCommit)
}

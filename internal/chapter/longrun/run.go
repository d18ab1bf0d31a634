package longrun

import (
	"fmt"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/scripted"
	"github.com/conform-spi/conform/internal/writer"
)

// work is the chapter's part of one spec: the script, its reference and
// what the spec knows landed.
type work struct {
	l         *scripted.Lab
	sc        *script
	ref       []round
	texts     scripted.Texts
	landed    int      // the last round whose commit the store answered Ok to
	landedRun string   // the run id it landed under
	runIDs    []string // the run ids of the processes so far
	rounds    int      // the rounds the last process found or committed
}

func (w *work) Texts() *scripted.Texts { return &w.texts }

func (w *work) Progress() string { return fmt.Sprintf("%d rounds", w.rounds) }

func (w *work) noteLanded(run string, k int) {
	if k > w.landed {
		w.landed, w.landedRun = k, run
	}
}

// Open finds the run p continues, checks what it found and returns its
// driver.
func (w *work) Open(p *scripted.Process) scripted.Driver {
	spec.Helper()
	d := newDriver(w, p)
	w.afterOpen(d)
	w.runIDs = append(w.runIDs, d.runID)
	w.rounds = d.st.round
	return d
}

// IsUnit tells whether b is a round's commit batch (it writes the run's
// Session scope) rather than a chunk or sweep batch.
func (w *work) IsUnit(b *hoststore.CommitBatch) bool {
	for _, s := range b.Scopes() {
		if s.Kind == hoststore.KindSession && strings.HasPrefix(string(s.Name), w.l.Prefix+"/run/") {
			return true
		}
	}
	return false
}

func (w *work) input() hoststore.ScopeRef { return w.l.Scope(hoststore.KindRecord, "input") }
func (w *work) session(run string) hoststore.ScopeRef {
	return w.l.Scope(hoststore.KindSession, "run/"+run)
}
func (w *work) out(run string, k int) hoststore.ScopeRef {
	return w.l.Scope(hoststore.KindRecord, fmt.Sprintf("run/%s/out/%d", run, k))
}

// driver is one process's part of a scripted run: the agent loop that
// finds the run it continues, and plays rounds through its writer.
type driver struct {
	w     *work
	p     *scripted.Process
	runID string
	st    state // the state after the last committed round
}

// newDriver finds the run p's writer continues: the one the input record
// names, from its last committed round, or a new run (named by the
// writer's fence token) when nothing was committed yet.
func newDriver(w *work, p *scripted.Process) *driver {
	spec.Helper()
	l := w.l
	d := &driver{w: w, p: p, st: w.sc.initial()}
	v, ok, err := p.Writer.Value(l.Ctx, w.input())
	if err != nil {
		l.Fail(l.FailOb(err), "the run's input record could not be read", "its value", chapter.ErrText(err))
	}
	if !ok {
		d.runID = fmt.Sprintf("run-t%d", p.Writer.Token())
		l.Env.Note("p%d finds no committed run: it runs the input as a new run %q", p.PID, d.runID)
		return d
	}
	d.runID = strings.TrimPrefix(string(v), "run ")
	sv, ok, err := p.Writer.Value(l.Ctx, w.session(d.runID))
	if err != nil || !ok {
		l.Fail(chapter.ObRun, fmt.Sprintf("the input record names run %q, whose Session scope cannot be read", d.runID), "the run's state", fmt.Sprintf("exists %v, %s", ok, chapter.OkOr(err)))
	}
	if d.st, err = decodeState(sv); err != nil {
		l.Fail(chapter.ObRun, "the run's Session head is not a state the run wrote", "a long-run state", err.Error())
	}
	l.Env.Note("p%d continues run %q after round %d", p.PID, d.runID, d.st.round)
	return d
}

func (d *driver) Finished() bool { return d.st.round == d.w.sc.rounds }

func (d *driver) Found() string { return fmt.Sprintf("round %d", d.st.round) }

func (d *driver) Landed(pos scripted.Pos) { d.w.noteLanded(d.runID, pos.Step) }

// Run plays the rounds left.
func (d *driver) Run() error {
	for k := d.st.round + 1; k <= d.w.sc.rounds; k++ {
		round := fmt.Sprintf("round %d", k)
		if err := d.p.Unit(scripted.Pos{Step: k}, round, "round", "in "+round, func() error { return d.round(k) }); err != nil {
			return err
		}
	}
	return nil
}

// round plays round k: the model call, the tool calls, each after its
// check, then the round's commit.
func (d *driver) round(k int) error {
	l, pid, w := d.w.l, d.p.PID, d.w
	r := d.p.Writer.Round()
	if err := d.p.At(beforeModel); err != nil {
		return err
	}
	if err := r.Check(l.Ctx, writer.ModelCall); err != nil {
		return err
	}
	m := w.sc.model(k, d.st.digest)
	l.Called(pid, fmt.Sprintf("the model call of round %d", k))
	l.Clock.Advance(m.think)
	if err := d.p.At(afterModel); err != nil {
		return err
	}
	var outs [][]byte
	for _, a := range m.tools {
		if err := d.p.At(beforeTool); err != nil {
			return err
		}
		if err := r.Check(l.Ctx, writer.ToolCall); err != nil {
			return err
		}
		l.Called(pid, fmt.Sprintf("tool call %s of round %d", a, k))
		o, took := w.sc.tool(a)
		l.Clock.Advance(took)
		outs = append(outs, o)
		if err := d.p.At(afterTool); err != nil {
			return err
		}
	}
	rd := w.sc.play(k, d.st, m, outs)
	ups := []writer.Update{
		{Scope: w.session(d.runID), Head: rd.state.encode(), Append: [][]byte{rd.row}},
		{Scope: w.out(d.runID, k), Head: rd.out},
	}
	if k == 1 {
		ups = append(ups, writer.Update{Scope: w.input(), Head: []byte("run " + d.runID)})
	}
	if err := r.Commit(l.Ctx, ups...); err != nil {
		return err
	}
	d.st = rd.state
	w.noteLanded(d.runID, k)
	w.rounds = k
	l.Env.Note("p%d committed round %d of run %q at %s", pid, k, d.runID, l.Now())
	return d.p.At(afterCommit)
}

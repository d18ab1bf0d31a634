package chapters

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/writer"
)

// lrPoint is a chosen point of a round, where a scenario acts.
type lrPoint int

const (
	ptBeforeModel lrPoint = iota // before the model call's check
	ptAfterModel                 // the model call returned
	ptBeforeTool                 // right before a tool call's check
	ptAfterTool                  // a tool call returned
	ptAfterCommit                // the round's commit landed
)

// errScenarioKill is what a driver answers when the scenario killed its
// process at a point of a round.
var errScenarioKill = errors.New("killed by the scenario")

// maxRefences bounds how often one round goes on through a fresh acquire.
const maxRefences = 3

// lrDriver is one process's part of a scripted run: the agent loop that
// finds the run it continues, and plays rounds through its writer.
type lrDriver struct {
	l     *lab
	lp    *labProc
	sc    *lrScript
	runID string
	found bool    // a committed run was found at open
	st    lrState // the state after the last committed round
	cur   int     // the round in progress
	hook  func(pt lrPoint, k int) error
	// onCommit is told of every round whose commit the store answered Ok to.
	onCommit func(run string, k int)
}

func (l *lab) lrInput() hoststore.ScopeRef { return l.scope(hoststore.KindRecord, "input") }
func (l *lab) lrSession(run string) hoststore.ScopeRef {
	return l.scope(hoststore.KindSession, "run/"+run)
}
func (l *lab) lrOut(run string, k int) hoststore.ScopeRef {
	return l.scope(hoststore.KindRecord, fmt.Sprintf("run/%s/out/%d", run, k))
}

// newLRDriver finds the run lp's writer continues: the one the input
// record names, from its last committed round, or a new run (named by the
// writer's fence token) when nothing was committed yet.
func newLRDriver(l *lab, lp *labProc, sc *lrScript) *lrDriver {
	GinkgoHelper()
	d := &lrDriver{l: l, lp: lp, sc: sc, st: sc.initial()}
	v, ok, err := lp.w.Value(l.ctx, l.lrInput())
	if err != nil {
		l.fail(l.failOb(err), "the run's input record could not be read", "its value", errText(err))
	}
	if !ok {
		d.runID = fmt.Sprintf("run-t%d", lp.w.Token())
		l.e.Note("p%d finds no committed run: it runs the input as a new run %q", lp.pid, d.runID)
		return d
	}
	d.found = true
	d.runID = strings.TrimPrefix(string(v), "run ")
	sv, ok, err := lp.w.Value(l.ctx, l.lrSession(d.runID))
	if err != nil || !ok {
		l.fail(ObRun, fmt.Sprintf("the input record names run %q, whose Session scope cannot be read", d.runID), "the run's state", fmt.Sprintf("exists %v, %s", ok, okOr(err)))
	}
	if d.st, err = decodeLRState(sv); err != nil {
		l.fail(ObRun, "the run's Session head is not a state the run wrote", "a long-run state", err.Error())
	}
	l.e.Note("p%d continues run %q after round %d", lp.pid, d.runID, d.st.round)
	return d
}

// at runs the scenario's hook at a point of round k.
func (d *lrDriver) at(pt lrPoint, k int) error {
	if d.hook == nil {
		return nil
	}
	return d.hook(pt, k)
}

// run plays the rounds left. A round refused because the writer fenced
// itself is played again from its start after a fresh acquire.
func (d *lrDriver) run() error {
	for k := d.st.round + 1; k <= d.sc.rounds; k++ {
		for attempt := 0; ; attempt++ {
			err := d.round(k)
			if err == nil {
				break
			}
			if !errors.Is(err, writer.ErrSelfFenced) || attempt == maxRefences {
				d.l.e.Note("p%d's run ends in round %d: %v", d.lp.pid, k, err)
				return err
			}
			d.l.e.Note("p%d: round %d refused (%v); a fresh acquire, then the round again", d.lp.pid, k, err)
			if err := d.lp.w.Refence(d.l.ctx); err != nil {
				d.l.e.Note("p%d's run ends: %v", d.lp.pid, err)
				return err
			}
		}
	}
	return nil
}

// round plays round k: the model call, the tool calls, each after its
// check, then the round's commit.
func (d *lrDriver) round(k int) error {
	l, pid := d.l, d.lp.pid
	d.cur = k
	r := d.lp.w.Round()
	if err := d.at(ptBeforeModel, k); err != nil {
		return err
	}
	if err := r.Check(l.ctx, writer.ModelCall); err != nil {
		return err
	}
	m := d.sc.model(k, d.st.digest)
	l.obs.called(pid, fmt.Sprintf("the model call of round %d", k))
	l.clock.Advance(m.think)
	if err := d.at(ptAfterModel, k); err != nil {
		return err
	}
	var outs [][]byte
	for _, a := range m.tools {
		if err := d.at(ptBeforeTool, k); err != nil {
			return err
		}
		if err := r.Check(l.ctx, writer.ToolCall); err != nil {
			return err
		}
		l.obs.called(pid, fmt.Sprintf("tool call %s of round %d", a, k))
		o, took := d.sc.tool(a)
		l.clock.Advance(took)
		outs = append(outs, o)
		if err := d.at(ptAfterTool, k); err != nil {
			return err
		}
	}
	rd := d.sc.play(k, d.st, m, outs)
	ups := []writer.Update{
		{Scope: l.lrSession(d.runID), Head: rd.state.encode(), Append: [][]byte{rd.row}},
		{Scope: l.lrOut(d.runID, k), Head: rd.out},
	}
	if k == 1 {
		ups = append(ups, writer.Update{Scope: l.lrInput(), Head: []byte("run " + d.runID)})
	}
	if err := r.Commit(l.ctx, ups...); err != nil {
		return err
	}
	d.st = rd.state
	if d.onCommit != nil {
		d.onCommit(d.runID, k)
	}
	l.e.Note("p%d committed round %d of run %q at %s", pid, k, d.runID, l.obs.at(l.clock.Now()))
	return d.at(ptAfterCommit, k)
}

// isRoundBatch tells whether b is a round's commit batch (it writes the
// run's Session scope) rather than a chunk or sweep batch.
func (l *lab) isRoundBatch(b *hoststore.CommitBatch) bool {
	for _, s := range b.Scopes() {
		if s.Kind == hoststore.KindSession && strings.HasPrefix(string(s.Name), l.prefix+"/run/") {
			return true
		}
	}
	return false
}

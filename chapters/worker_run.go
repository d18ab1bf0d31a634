package chapters

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/writer"
)

// wkScript is the durable worker's input: jobs, each of a number of
// steps, whose outputs follow from the seed, the job and the step.
type wkScript struct {
	lr   lrScript // the seeded source and the fakes' time unit
	jobs int
}

// steps answers how many steps job j has.
func (s *wkScript) steps(j int) int { return 2 + s.lr.rng("steps", strconv.Itoa(j)).IntN(3) }

// step answers the output of step n of job j, and how long it took.
func (s *wkScript) step(j, n int) ([]byte, time.Duration) {
	r := s.lr.rng("step", strconv.Itoa(j), strconv.Itoa(n))
	return fill(r, s.lr.out/2+r.IntN(s.lr.out)), s.lr.unit * time.Duration(1+r.IntN(3))
}

// wkState is a job's committed state: its Record scope's head.
type wkState struct {
	steps, done int
	result      string // digest of every output so far
	acc         []byte // every output so far
}

const wkStateMagic = "job/1"

func (st wkState) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsteps %d done %d\nresult %s\n", wkStateMagic, st.steps, st.done, st.result)
	b.Write(st.acc)
	return b.Bytes()
}

func decodeWKState(v []byte) (wkState, error) {
	parts := bytes.SplitN(v, []byte("\n"), 4)
	if len(parts) != 4 || string(parts[0]) != wkStateMagic {
		return wkState{}, fmt.Errorf("not a job state: %.40q", v)
	}
	var st wkState
	if _, err := fmt.Sscanf(string(parts[1]), "steps %d done %d", &st.steps, &st.done); err != nil {
		return wkState{}, fmt.Errorf("job state: %w", err)
	}
	r, ok := strings.CutPrefix(string(parts[2]), "result ")
	if !ok {
		return wkState{}, fmt.Errorf("job state result line %q", parts[2])
	}
	st.result, st.acc = r, parts[3]
	return st, nil
}

// advance is the job's state and rows after step n with output out.
func (st wkState) advance(j, n int, out []byte) (wkState, [][]byte) {
	h := sha256.Sum256([]byte(st.result + "\x00" + string(out)))
	next := wkState{steps: st.steps, done: n, result: hex.EncodeToString(h[:16]), acc: append(bytes.Clone(st.acc), out...)}
	sum := sha256.Sum256(out)
	rows := [][]byte{[]byte(fmt.Sprintf("job %d step %d: %d bytes %x", j, n, len(out), sum[:8]))}
	if n == st.steps {
		rows = append(rows, []byte(fmt.Sprintf("job %d finished: %s", j, next.result)))
	}
	return next, rows
}

// initial is job j's state as submitted.
func (s *wkScript) initial(j int) wkState {
	return wkState{steps: s.steps(j), result: "-", acc: []byte{}}
}

// wkRef is the reference: each job's state and rows after each step.
type wkRef struct {
	states [][]wkState // [job-1][done]
	rows   [][][]byte  // [job-1]: every row once finished
}

func (s *wkScript) reference() wkRef {
	var ref wkRef
	for j := 1; j <= s.jobs; j++ {
		st := s.initial(j)
		states := []wkState{st}
		var rows [][]byte
		for n := 1; n <= st.steps; n++ {
			out, _ := s.step(j, n)
			var add [][]byte
			st, add = st.advance(j, n, out)
			states = append(states, st)
			rows = append(rows, add...)
		}
		ref.states = append(ref.states, states)
		ref.rows = append(ref.rows, rows)
	}
	return ref
}

// wkPoint is a chosen point of a worker's job.
type wkPoint int

const (
	wpBeforeStep  wkPoint = iota // before a step's check
	wpAfterStep                  // the step's tool call returned
	wpAfterCommit                // the step's commit landed
	wpBetweenJobs                // a job finished; the next not started
)

// wkDriver is one worker process: it takes the jobs from their Record
// scopes in name order and commits each step's progress.
type wkDriver struct {
	l        *lab
	lp       *labProc
	sc       *wkScript
	cur      [2]int // the job and step in progress
	hook     func(pt wkPoint, j, n int) error
	onCommit func(j, n int)
	onStep   func(j, n int) // told of every step the worker starts
}

func (l *lab) wkJob(j int) hoststore.ScopeRef {
	return l.scope(hoststore.KindRecord, "job/"+strconv.Itoa(j))
}

func (d *wkDriver) at(pt wkPoint, j, n int) error {
	if d.hook == nil {
		return nil
	}
	return d.hook(pt, j, n)
}

// state loads job j's state through the worker's writer.
func (d *wkDriver) state(j int) wkState {
	GinkgoHelper()
	v, ok, err := d.lp.w.Value(d.l.ctx, d.l.wkJob(j))
	if err != nil || !ok {
		d.l.fail(ObRun, fmt.Sprintf("job %d's Record scope cannot be read", j), "the job", fmt.Sprintf("exists %v, %s", ok, okOr(err)))
	}
	st, err := decodeWKState(v)
	if err != nil {
		d.l.fail(ObRun, fmt.Sprintf("job %d's head is not a job state", j), "a job state", err.Error())
	}
	return st
}

// run works every job to its end.
func (d *wkDriver) run() error {
	for j := 1; j <= d.sc.jobs; j++ {
		st := d.state(j)
		if st.done == st.steps {
			continue
		}
		for n := st.done + 1; n <= st.steps; n++ {
			for attempt := 0; ; attempt++ {
				next, err := d.step(j, n, st)
				if err == nil {
					st = next
					break
				}
				if !errors.Is(err, writer.ErrSelfFenced) || attempt == maxRefences {
					d.l.e.Note("p%d's work ends at job %d step %d: %v", d.lp.pid, j, n, err)
					return err
				}
				d.l.e.Note("p%d: job %d step %d refused (%v); a fresh acquire, then the step again", d.lp.pid, j, n, err)
				if err := d.lp.w.Refence(d.l.ctx); err != nil {
					return err
				}
			}
		}
		if err := d.at(wpBetweenJobs, j, st.steps); err != nil {
			return err
		}
	}
	return nil
}

// step runs step n of job j after its check and commits its progress.
func (d *wkDriver) step(j, n int, st wkState) (wkState, error) {
	l := d.l
	d.cur = [2]int{j, n}
	r := d.lp.w.Round()
	if err := d.at(wpBeforeStep, j, n); err != nil {
		return st, err
	}
	if err := r.Check(l.ctx, writer.ToolCall); err != nil {
		return st, err
	}
	l.obs.called(d.lp.pid, fmt.Sprintf("step %d of job %d", n, j))
	if d.onStep != nil {
		d.onStep(j, n)
	}
	out, took := d.sc.step(j, n)
	l.clock.Advance(took)
	if err := d.at(wpAfterStep, j, n); err != nil {
		return st, err
	}
	next, rows := st.advance(j, n, out)
	if err := r.Commit(l.ctx, writer.Update{Scope: l.wkJob(j), Head: next.encode(), Append: rows}); err != nil {
		return st, err
	}
	l.e.Note("p%d committed job %d step %d at %s", d.lp.pid, j, n, l.obs.at(l.clock.Now()))
	if d.onCommit != nil {
		d.onCommit(j, n)
	}
	return next, d.at(wpAfterCommit, j, n)
}

// isJobBatch tells whether b is a step's commit batch.
func (l *lab) isJobBatch(b *hoststore.CommitBatch) bool {
	for _, s := range b.Scopes() {
		if strings.HasPrefix(string(s.Name), l.prefix+"/job/") {
			return true
		}
	}
	return false
}

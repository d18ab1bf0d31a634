// Package scripted is the engine of the chapters that run scripted work
// over a store through a writer (package writer): the long-run chapter and
// the durable-worker chapter. A spec starts a process, arms a fault at a
// chosen point of the work, plays the work until the fault hits, restarts
// processes until the work is finished, and opens once more. After every
// open the chapter checks what the process found against its reference;
// all along, an observer checks the writer rules on what each process
// sends.
//
// What differs between the chapters (the work itself, its reference, where
// its points are, the words of its failures) comes in through Work and
// Driver; everything else exists once, here.
package scripted

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// Pos is a unit of the work: what one commit records. A long run counts
// its rounds in Step (Job is 0); a worker counts the steps of each job.
type Pos struct{ Job, Step int }

// Point is a chosen point of a unit, where a fault acts. Each chapter
// names its own points.
type Point int

// End is how the faulted process's work must end.
type End int

const (
	// Killed: the process dies at the point.
	Killed End = iota
	// Completes: the writer goes on and finishes the work.
	Completes
	// Stopped: superseded by a takeover, the realm stops for it.
	Stopped
)

// Fault is one chosen point of the work and what happens there.
type Fault struct {
	ID, Name string
	// What says what happens, after "being": "killed before a step".
	What        string
	Obligations []reports.ObligationID
	// Site is the in-store failpoint the fault needs ("": none).
	Site instore.Site
	End  End
	Arm  Arm
}

// Arm arms a fault on the first process of a spec, at s.At.
type Arm func(s *Spec, p *Process)

// Texts are the words of a chapter's failures and notes where the two
// chapters differ.
type Texts struct {
	Held      string // the unit's commit a hold waits for: "round 3's commit"
	Where     string // where the fault hits, after a verb: " in round 3", or ""
	Proc      string // the faulted process: "process", "worker"
	Writer    string // what goes on after a fault: "writer", "worker"
	Work      string // what a process does: "run", "work"
	Whole     string // all the work: "the run", "the jobs"
	Finished  string // the work finished: "the run finished"
	Target    string // all the work, as Work.Progress counts it: "5 rounds"
	NotFound  string // the failure when a last open does not find the work finished
	FoundWant string // what a last open must find, as Driver.Found says it: "round 5"
	Clock     string // the clock time in the spec's last note: "of clock time"
	Wait      string // what the faulted process does while another takes over
	GoOn      string // what it then goes on with: "its step"
}

// Work is a chapter's part of one spec.
type Work interface {
	// Open finds where p's writer continues, checks what it found against
	// the reference and what the spec knows landed, and returns p's driver.
	Open(p *Process) Driver
	// IsUnit tells whether b is a unit's commit batch rather than a chunk
	// or sweep batch.
	IsUnit(b *hoststore.CommitBatch) bool
	// Progress returns how far the work got, in words, as Texts.Target
	// counts it.
	Progress() string
	// Texts returns the chapter's words.
	Texts() *Texts
}

// Driver is one process's part of the work.
type Driver interface {
	// Run plays the work left; nil means it finished.
	Run() error
	// Finished tells whether the process found the work finished.
	Finished() bool
	// Found returns what the process found, in words, as Texts.FoundWant
	// says it.
	Found() string
	// Landed notes that unit pos landed though the process never heard so
	// (its answer lost).
	Landed(pos Pos)
}

// Spec is one spec of a scripted chapter.
type Spec struct {
	Lab *Lab
	// At is where the fault hits.
	At Pos

	work     Work
	t        *Texts
	waitHeld func() bool
	done     bool // the last process found the work finished, or finished it
}

// start starts a process that opens its writer and finds its work, and
// has the chapter check what it found.
func (s *Spec) start(takeover bool) (*Process, Driver) {
	spec.Helper()
	p := s.Lab.Start(takeover)
	p.spec = s
	d := s.work.Open(p)
	p.drv = d
	s.done = d.Finished()
	return p, d
}

// run runs d and notes when it finished the work.
func (s *Spec) run(d Driver) error {
	err := d.Run()
	if err == nil {
		s.done = true
	}
	return err
}

// Play runs one spec over e: a process faulted by f at the unit newWork
// returns, restarts until the work finished, then one more open. tag
// names the spec's scopes under the row's; unsafe names the writer rules
// the writer breaks (none for the chapters as registered).
func Play(ctx context.Context, e *chapter.Env, f Fault, tag string, unsafe writer.Unsafe, newWork func(l *Lab) (Work, Pos)) {
	spec.Helper()
	if f.Site != "" && !e.ProbeInStore(ctx, f.Site) {
		e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", f.Site))
	}
	began := time.Now()
	l := newLab(ctx, e, fmt.Sprintf("%s/%s", e.RowID(), tag), unsafe)
	w, at := newWork(l)
	s := &Spec{Lab: l, At: at, work: w, t: w.Texts()}
	t := s.t
	p, d := s.start(false)
	if f.Arm != nil {
		f.Arm(s, p)
	}
	err := s.run(d)
	if s.waitHeld != nil && !s.waitHeld() {
		e.NothingExercised(fmt.Sprintf("%s answered without reaching the in-store failpoint %s", t.Held, f.Site))
	}
	switch f.End {
	case Killed:
		if !p.dead {
			l.Fail(chapter.ObRun, fmt.Sprintf("harness: the %s was to be killed%s, but its %s ended otherwise", t.Proc, t.Where, t.Work), "killed", chapter.OkOr(err))
		}
	case Completes:
		if err != nil {
			l.Fail(l.FailOb(err), fmt.Sprintf("the %s did not go on after being %s%s", t.Writer, f.What, t.Where), t.Finished, chapter.ErrText(err))
		}
	case Stopped:
		if !errors.Is(err, writer.ErrStopped) {
			l.Fail(chapter.ObWriter, fmt.Sprintf("the superseded %s's %s ended with %s, not with its realm stopped", t.Proc, t.Work, chapter.OkOr(err)),
				"the realm stops for it (another process took the fence)", chapter.OkOr(err))
		}
	}
	for i := 0; !s.done; i++ {
		if i == 3 {
			l.Fail(chapter.ObRun, t.Whole+" did not finish after three restarts", t.Target, w.Progress())
		}
		p, d := s.start(false)
		if err := s.run(d); err != nil {
			l.Fail(l.FailOb(err), fmt.Sprintf("p%d could not go on with %s after a restart", p.PID, t.Whole), t.Finished, chapter.ErrText(err))
		}
	}
	_, d = s.start(false)
	if !d.Finished() {
		l.Fail(chapter.ObRun, t.NotFound, t.FoundWant, d.Found())
	}
	l.checkObserver()
	e.Note("spec done: %d processes, %s %s, %s of wall time", len(l.procs), l.Clock.Since(writer.ManualEpoch), t.Clock, time.Since(began).Round(time.Millisecond))
}

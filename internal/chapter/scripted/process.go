package scripted

import (
	"errors"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/writer"
)

// Process is one process of a scripted run: a chapter process, what its
// writer drives, and its writer.
type Process struct {
	// PID numbers the process within the spec, from 1.
	PID int
	// Writer is the process's writer.
	Writer *writer.Writer

	l    *Lab
	proc *chapter.Proc
	st   *obsStore
	dead bool
	cur  Pos                          // the unit in progress
	hook func(pt Point, at Pos) error // what the fault does at a point
	drv  Driver
	spec *Spec
}

// landed tells the driver of process p that unit pos landed.
func (p *Process) landed(pos Pos) { p.drv.Landed(pos) }

// maxRefences bounds how often one unit goes on through a fresh acquire.
const maxRefences = 3

// Unit plays unit pos through play. A unit refused because the writer
// fenced itself is played again from its start after a fresh acquire. For
// the trail, name names the unit ("round 3"), kind its kind ("round") and
// at where it is ("in round 3").
func (p *Process) Unit(pos Pos, name, kind, at string, play func() error) error {
	l, work := p.l, p.spec.t.Work
	for attempt := 0; ; attempt++ {
		p.cur = pos
		err := play()
		if err == nil {
			return nil
		}
		if !errors.Is(err, writer.ErrSelfFenced) || attempt == maxRefences {
			l.Env.Note("p%d's %s ends %s: %v", p.PID, work, at, err)
			return err
		}
		l.Env.Note("p%d: %s refused (%v); a fresh acquire, then the %s again", p.PID, name, err, kind)
		if err := p.Writer.Refence(l.Ctx); err != nil {
			l.Env.Note("p%d's %s ends: %v", p.PID, work, err)
			return err
		}
	}
}

// At runs the fault's hook, if any, at point pt of the unit in progress.
// An error ends the unit: the process was killed there.
func (p *Process) At(pt Point) error {
	if p.hook == nil {
		return nil
	}
	return p.hook(pt, p.cur)
}

// kill ends the process as a crash: its writer stops (no request) and
// its handle is killed with whatever it had in flight.
func (p *Process) kill() {
	p.l.Env.Note("p%d is killed at %s", p.PID, p.l.obs.at(p.l.Clock.Now()))
	p.dead = true
	p.Writer.Close()
	p.proc.Kill()
}

// holdCommit arms a hold at site for the first batch match accepts, and a
// helper that kills p once that batch is held inside the store, then lets
// it go on: the process dies with its commit in flight. wait returns
// whether a batch was held (false: none reached the site); call it once
// the process's work has ended. It is also called at the spec's end, so a
// failed spec leaves nothing armed.
func (p *Process) holdCommit(site instore.Site, match func(*hoststore.CommitBatch) bool) (wait func() bool) {
	var (
		mu   sync.Mutex
		hold *faults.Hold
	)
	armed := make(chan *faults.Hold, 1)
	stop := make(chan struct{})
	held := make(chan bool, 1)
	p.st.setHooks(func(s *obsStore) {
		s.beforeCommit = func(b *hoststore.CommitBatch) error {
			mu.Lock()
			defer mu.Unlock()
			if hold == nil && match(b) {
				hold = p.l.Env.Injector().HoldAt(site, chapter.MatchID(b.CommitID()))
				armed <- hold
			}
			return nil
		}
	})
	go func() {
		var h *faults.Hold
		select {
		case h = <-armed:
		case <-stop:
			held <- false
			return
		}
		select {
		case <-h.Arrived():
			p.kill()
			h.Release()
			held <- true
		case <-stop:
			held <- false
		}
	}()
	var (
		once sync.Once
		ok   bool
	)
	wait = func() bool {
		once.Do(func() {
			close(stop)
			ok = <-held
			mu.Lock()
			if hold != nil {
				hold.Disarm()
			}
			mu.Unlock()
		})
		return ok
	}
	p.l.Env.Spec().Defer(func() { wait() })
	return wait
}

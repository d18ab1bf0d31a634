package scripted

import (
	"errors"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
)

// errKilled is what a point of a unit returns when the fault killed its
// process there.
var errKilled = errors.New("killed by the scenario")

// onceAt makes p run f the first time it reaches point pt of unit at, and
// never again.
func onceAt(p *Process, pt Point, at Pos, f func() error) {
	fired := false
	p.hook = func(q Point, pos Pos) error {
		if q != pt || pos != at || fired {
			return nil
		}
		fired = true
		return f()
	}
}

// KillAt kills the process at point pt of the spec's unit.
func KillAt(pt Point) Arm {
	return func(s *Spec, p *Process) {
		onceAt(p, pt, s.At, func() error {
			p.kill()
			return errKilled
		})
	}
}

// HeldInStore kills the process while the unit's commit is held inside
// the store, at instore.CommitBeforePoint.
func HeldInStore(s *Spec, p *Process) {
	s.waitHeld = p.holdCommit(instore.CommitBeforePoint, func(b *hoststore.CommitBatch) bool {
		return s.work.IsUnit(b) && p.cur == s.At
	})
}

// afterUnitCommit makes p answer f(err) once, for the spec's unit's
// commit that the store returned nil to, in place of Ok.
func afterUnitCommit(s *Spec, p *Process, f func() error) {
	fired := false
	p.st.setHooks(func(st *obsStore) {
		st.afterCommit = func(b *hoststore.CommitBatch, err error) error {
			if fired || err != nil || !s.work.IsUnit(b) || p.cur != s.At {
				return err
			}
			fired = true
			return f()
		}
	})
}

// AnswerLost kills the process after the unit's commit landed, its answer
// lost.
func AnswerLost(s *Spec, p *Process) {
	afterUnitCommit(s, p, func() error {
		p.landed(s.At)
		p.kill()
		return faults.ErrKilled
	})
}

// Indeterminate returns Indeterminate to the unit's commit after it
// landed; the process lives on.
func Indeterminate(s *Spec, p *Process) {
	afterUnitCommit(s, p, func() error {
		return &hoststore.IndeterminateError{Detail: "the store's answer was lost (injected by the chapter)"}
	})
}

// RenewFails makes the process's next renew after point pt fail, then
// lets one renew interval pass.
func RenewFails(pt Point) Arm {
	return func(s *Spec, p *Process) {
		l := s.Lab
		onceAt(p, pt, s.At, func() error {
			failed := false
			p.st.setHooks(func(st *obsStore) {
				st.beforeRenew = func() error {
					if failed {
						return nil
					}
					failed = true
					return &hoststore.UnavailableError{Detail: "the store cannot be reached (injected by the chapter)"}
				}
			})
			l.Env.Note("the next renew of p%d fails; one renew interval passes", p.PID)
			l.Clock.Advance(l.Timing.RenewInterval())
			return nil
		})
	}
}

// Pause pauses the process at point pt for its self-fence window.
func Pause(pt Point) Arm {
	return func(s *Spec, p *Process) {
		l := s.Lab
		onceAt(p, pt, s.At, func() error {
			l.Env.Note("p%d pauses for its self-fence window, %s", p.PID, l.Timing.SelfFenceWindow())
			l.Clock.Pause(l.Timing.SelfFenceWindow())
			return nil
		})
	}
}

// Takeover makes another process take over at point pt and finish the
// work; then the process goes on.
func Takeover(pt Point) Arm {
	return func(s *Spec, p *Process) {
		l, t := s.Lab, s.t
		onceAt(p, pt, s.At, func() error {
			l.Env.Note("p%d %s", p.PID, t.Wait)
			nb, db := s.start(true)
			if err := s.run(db); err != nil {
				l.Fail(l.FailOb(err), fmt.Sprintf("p%d, which took over, could not finish %s", nb.PID, t.Whole), t.Finished, chapter.ErrText(err))
			}
			nb.Writer.Close()
			l.Env.Note("p%d goes on with %s", p.PID, t.GoOn)
			return nil
		})
	}
}

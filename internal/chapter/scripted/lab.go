package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// Lab is one spec's world: its scope prefix, the run's manual clock, the
// observer and the processes started over the realm.
type Lab struct {
	// Env is the chapter run the spec belongs to.
	Env *chapter.Env
	// Ctx is the spec's context.
	Ctx context.Context
	// Prefix starts the name of every scope of the spec.
	Prefix string
	// Clock is the run's manual clock: the fakes advance it.
	Clock *writer.ManualClock
	// Timing is the store's fence timing.
	Timing hoststore.FenceTiming

	obs   *observer
	opts  writer.Options
	procs []*Process
}

// newLab starts a spec's world under prefix, with the writer rules unsafe
// breaks (none for the chapters as registered).
func newLab(ctx context.Context, e *chapter.Env, prefix string, unsafe writer.Unsafe) *Lab {
	spec.Helper()
	p := e.MustOpen(ctx)
	t, err := p.Timing(ctx)
	p.Kill()
	if err != nil || !t.Valid() {
		e.Fail(chapter.ObOperations, "the store's FenceTiming could not be read", "a valid timing", chapter.OkOr(err))
	}
	c := writer.NewManualClock()
	l := &Lab{Env: e, Ctx: ctx, Prefix: prefix, Clock: c, obs: newObserver(c, t.SelfFenceWindow(), idLogOf(e)), Timing: t}
	l.opts = writer.Options{
		Clock:          c,
		ChunkPrefix:    prefix + "/chunk/",
		ChunkThreshold: 2 << 10,
		Limits:         writer.Limits{BatchBytes: 4 << 10, RowBytes: 1 << 10},
		SweepEvery:     3 * t.RenewInterval(),
		Unsafe:         unsafe,
		Logf:           func(f string, a ...any) { e.Tracef("   writer: "+f, a...) },
	}
	e.Spec().Defer(l.close)
	return l
}

// Scope returns the spec's scope of kind named name under its prefix.
func (l *Lab) Scope(kind hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: kind, Name: hoststore.ScopeName(l.Prefix + "/" + name)}
}

// Start starts a process and opens its writer: exclusively (after Held,
// the leases are lapsed and it opens again), or by an explicit takeover.
// A writer that cannot open fails the spec.
func (l *Lab) Start(takeover bool) *Process {
	spec.Helper()
	p := l.Env.MustOpen(l.Ctx)
	lp := &Process{l: l, PID: len(l.procs) + 1, proc: p}
	lp.st = &obsStore{procStore: procStore{p: p, timing: l.Timing}, o: l.obs, e: l.Env, pid: lp.PID}
	l.procs = append(l.procs, lp)
	l.obs.open(lp.PID, takeover)
	opts := l.opts
	opts.Takeover = takeover
	l.Env.Note("p%d (%s) opens its writer%s at %s", lp.PID, p.Name(), map[bool]string{true: " by an explicit takeover"}[takeover], l.obs.at(l.Clock.Now()))
	w, err := writer.Open(l.Ctx, lp.st, opts)
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		l.Env.Lapse(l.Ctx)
		w, err = writer.Open(l.Ctx, lp.st, opts)
	}
	if err != nil {
		l.Fail(l.FailOb(err), fmt.Sprintf("p%d's writer could not open the realm", lp.PID), "an open writer", chapter.ErrText(err))
	}
	lp.Writer = w
	return lp
}

// FailOb returns the obligation a failed writer call is reported under: a
// breach of the error contract, or the writer rules.
func (l *Lab) FailOb(err error) reports.ObligationID {
	var br *chapter.Breach
	if errors.As(err, &br) {
		return chapter.ObErrors
	}
	return chapter.ObWriter
}

// close ends every process still alive (their writers stop, the handles
// are killed) and disarms nothing of the others.
func (l *Lab) close() {
	for _, lp := range l.procs {
		if lp.Writer != nil {
			lp.Writer.Close()
		}
		if !lp.proc.Dead() {
			lp.proc.Kill()
		}
	}
}

// Fail fails the spec under ob, unless the observer saw a writer rule
// broken first: that is the cause, and the failure names it.
func (l *Lab) Fail(ob reports.ObligationID, message, expected, got string) {
	spec.Helper()
	l.checkObserver()
	l.Env.Fail(ob, message, expected, got)
}

// FailDiff is Fail with a diff.
func (l *Lab) FailDiff(ob reports.ObligationID, message, expected, got, diff string) {
	spec.Helper()
	l.checkObserver()
	l.Env.FailDiff(ob, message, expected, got, diff)
}

// checkObserver fails the spec with every writer rule the observer saw
// broken, and with any breach of the error contract the run met.
func (l *Lab) checkObserver() {
	spec.Helper()
	if fs := l.obs.Findings(); len(fs) > 0 {
		var sb strings.Builder
		for i, f := range fs {
			if i == 8 {
				fmt.Fprintf(&sb, "… (%d in all)\n", len(fs))
				break
			}
			sb.WriteString(f.message + "\n")
		}
		l.Env.Fail(fs[0].ob, "the writer broke Core's writer rules during the run: "+fs[0].message, "no rule broken", sb.String())
	}
	if br := l.Env.FirstBreach(); br != nil {
		l.Env.Fail(chapter.ObErrors, "the store broke the error contract during the run", "answers within the contract", br.Error())
	}
}

// Called has the observer check a model or tool call that process pid
// starts now; what names it.
func (l *Lab) Called(pid int, what string) { l.obs.called(pid, what) }

// Now returns the run's clock now, as the trail shows it: "+1m30s".
func (l *Lab) Now() string { return l.obs.at(l.Clock.Now()) }

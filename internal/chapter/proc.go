package chapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/textsafe"
)

// Breach is an answer outside the contract that the harness caught around a
// store call: a panic, a hang past the per-call bound, or an error that is none
// of the six types. The call's caller turns it into a failure of ObErrors
// (or of the row's own obligation, where the row says so).
type Breach struct {
	Op     string
	Kind   BreachKind
	Detail string
}

// BreachKind is the kind of answer outside the contract a Breach records.
type BreachKind string

// The kinds of breach the harness catches around a store call.
const (
	// BreachPanic is a store call that panicked.
	BreachPanic BreachKind = "panic"
	// BreachHang is a store call still unanswered at its per-call bound.
	BreachHang BreachKind = "hang"
	// BreachUnknownError is an error that is none of the six types, or a
	// context error while the caller's context was live.
	BreachUnknownError BreachKind = "unknown error"
	// BreachNilHandle is an Open that answered neither a store nor an error.
	BreachNilHandle BreachKind = "nil handle"
)

// Error names the operation, the kind of breach and what the harness saw.
func (b *Breach) Error() string {
	return fmt.Sprintf("store breach in %s: %s: %s", b.Op, b.Kind, b.Detail)
}

// IsHang reports whether err is a call still unanswered at its per-call
// bound.
func IsHang(err error) bool {
	var br *Breach
	return errors.As(err, &br) && br.Kind == BreachHang
}

// Proc is one "process" of the chapter: a handle from the factory's Open,
// wrapped in the fault injector and traced. Every call runs with the row's
// context under its own per-call bound; a panic, a hang or an error
// outside the contract comes back as a *Breach, never takes the harness
// down.
type Proc struct {
	ID    int
	Token hoststore.FenceToken // the last token this process acquired (0: none)

	env   *Env
	wrap  *faults.Store
	dead  atomic.Bool
	mu    sync.Mutex
	stale bool // set once a call hung: the handle is not used again
}

// Wrapped is the fault-injecting wrapper around the process's handle.
func (p *Proc) Wrapped() *faults.Store { return p.wrap }

// Name is how the trail names the process.
func (p *Proc) Name() string { return fmt.Sprintf("p%d", p.ID) }

// Kill ends the process: its handle is killed (Kill() where it has one) with
// whatever it had in flight.
func (p *Proc) Kill() {
	if p.dead.Swap(true) {
		return
	}
	p.env.Tracef("%s killed", p.Name())
	p.wrap.Kill()
}

// Dead reports whether the process was killed.
func (p *Proc) Dead() bool {
	p.mu.Lock()
	stale := p.stale
	p.mu.Unlock()
	return stale || p.dead.Load() || p.wrap.Killed()
}

// run calls f on its own goroutine and waits for its answer, bounded by
// the per-call bound (Timing.CallBound; the harness's own holds and delays
// do not count). A panic in the store becomes a Breach; so does a call
// still unanswered at its bound (a hang), which also makes the handle
// stale: it is not used again. A call the spec's end cut short returns
// the context's error. The store's time of every answer is recorded for
// the bounds of later calls.
func (p *Proc) run(ctx context.Context, op string, f func(ctx context.Context) (any, error)) (any, error) {
	return p.runAs(ctx, ctx, op, f)
}

// runAs is run for a call made under the caller's context callCtx, which
// may end before the spec's ctx does: the store sees callCtx end (and the
// end of the wait for its answer), and its answer is judged against
// callCtx.
func (p *Proc) runAs(ctx, callCtx context.Context, op string, f func(ctx context.Context) (any, error)) (any, error) {
	e := p.env
	bound, rule := e.timing.CallBound(op)
	a := e.await(ctx, bound, func(actx context.Context) (any, error) {
		if callCtx == ctx {
			return f(actx)
		}
		mctx, cancel := context.WithCancel(e.inj.Bind(callCtx))
		defer cancel()
		defer context.AfterFunc(actx, cancel)()
		return f(mctx)
	})
	switch {
	case a.panicked != "":
		return nil, p.classify(ctx, op, &Breach{Op: op, Kind: BreachPanic, Detail: a.panicked})
	case a.hung, a.gone:
		p.mu.Lock()
		p.stale = true
		p.mu.Unlock()
		if w := p.wrap; w != nil {
			go w.Kill() // the handle is not used again; Kill may itself block in a hung store
		}
		if a.gone {
			return nil, ctx.Err()
		}
		b := &Breach{Op: op, Kind: BreachHang, Detail: fmt.Sprintf("the store did not answer %s within the per-call bound of %s", op, rule)}
		e.noteBreach(b)
		e.noteTrouble(op, fmt.Sprintf("%s hung (no answer within %s)", op, bound), true)
		return nil, b
	}
	if a.clean && !errors.Is(a.err, faults.ErrKilled) {
		e.timing.observe(op, a.took)
	}
	if hoststore.KindOf(a.err) == hoststore.ErrKindUnavailable && !IsHarnessErr(a.err) {
		e.noteTrouble(op, fmt.Sprintf("%s answered %s", op, ErrText(a.err)), false)
	}
	return a.val, p.classify(callCtx, op, a.err)
}

// call runs f as Proc.run does and returns its answer as f's type: the
// zero value when the store did not answer.
func call[T any](ctx context.Context, p *Proc, op string, f func(ctx context.Context) (T, error)) (T, error) {
	return callUnder(ctx, ctx, p, op, f)
}

// callUnder is call for a call made under the caller's context callCtx
// (see runAs).
func callUnder[T any](ctx, callCtx context.Context, p *Proc, op string, f func(ctx context.Context) (T, error)) (T, error) {
	v, err := p.runAs(ctx, callCtx, op, func(ctx context.Context) (any, error) { return f(ctx) })
	t, _ := v.(T)
	return t, err
}

// classify checks err against the error contract; a breach is recorded
// with the spec.
func (p *Proc) classify(ctx context.Context, op string, err error) error {
	err = p.classify1(ctx, op, err)
	var br *Breach
	if errors.As(err, &br) && br.Kind != BreachHang {
		p.env.noteBreach(br)
	}
	return err
}

func (p *Proc) classify1(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var br *Breach
	if errors.As(err, &br) || errors.Is(err, faults.ErrKilled) || errors.Is(err, instore.ErrCrashed) {
		return err
	}
	switch hoststore.KindOf(err) {
	case hoststore.ErrKindOther:
		return &Breach{Op: op, Kind: BreachUnknownError, Detail: fmt.Sprintf("%T: %v (a store answers one of the six error types, or ctx.Err())", err, err)}
	case hoststore.ErrKindContext:
		if ctx.Err() == nil {
			return &Breach{Op: op, Kind: BreachUnknownError, Detail: fmt.Sprintf("answered a context error %q while the caller's context was live", err)}
		}
	}
	return err
}

func clipStack(s []byte) string { return textsafe.Clip(string(s), 2048) }

func (p *Proc) trace(op string, args string, err error, result string) {
	status := "ok"
	if err != nil {
		status = ErrText(err)
	}
	if result != "" {
		status += " → " + result
	}
	p.env.Tracef("%s.%s(%s) = %s", p.Name(), op, args, status)
}

// ErrText returns an error as a trail shows it: its contract kind and text.
func ErrText(err error) string {
	k := hoststore.KindOf(err)
	switch {
	case errors.Is(err, faults.ErrKilled):
		return "killed"
	case errors.Is(err, instore.ErrCrashed):
		return "crashed: " + err.Error()
	}
	var br *Breach
	if errors.As(err, &br) {
		return "BREACH " + string(br.Kind) + ": " + textsafe.Clip(br.Detail, 300)
	}
	return string(k) + ": " + textsafe.Clip(err.Error(), 300)
}

// Acquire calls AcquireFence and remembers the token it got.
func (p *Proc) Acquire(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	g, err := call(ctx, p, "AcquireFence", func(ctx context.Context) (hoststore.FenceGrant, error) { return p.wrap.AcquireFence(ctx, mode) })
	res := ""
	if err == nil {
		p.Token = g.Token
		res = fmt.Sprintf("token %d, superseded lease %s", g.Token, g.SupersededLease)
	}
	p.trace("AcquireFence", mode.String(), err, res)
	return g, err
}

// Renew calls RenewFence with token.
func (p *Proc) Renew(ctx context.Context, token hoststore.FenceToken) error {
	_, err := p.run(ctx, "RenewFence", func(ctx context.Context) (any, error) { return nil, p.wrap.RenewFence(ctx, token) })
	p.trace("RenewFence", fmt.Sprint(token), err, "")
	return err
}

// Timing returns the store's FenceTiming (a panic there is a breach too).
func (p *Proc) Timing(ctx context.Context) (hoststore.FenceTiming, error) {
	return call(ctx, p, "FenceTiming", func(context.Context) (hoststore.FenceTiming, error) { return p.wrap.FenceTiming(), nil })
}

// Load calls LoadHead.
func (p *Proc) Load(ctx context.Context, s hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	return p.loadUnder(ctx, ctx, s)
}

// loadUnder calls LoadHead under the caller's context callCtx (see runAs).
func (p *Proc) loadUnder(ctx, callCtx context.Context, s hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	h, err := callUnder(ctx, callCtx, p, "LoadHead", func(ctx context.Context) (*hoststore.VersionedHead, error) { return p.wrap.LoadHead(ctx, s) })
	p.trace("LoadHead", s.String()+ownContext(ctx, callCtx), err, headText(h))
	return h, err
}

// List calls ListHeads.
func (p *Proc) List(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	return p.listUnder(ctx, ctx, kind, after, limit)
}

// listUnder calls ListHeads under the caller's context callCtx (see runAs).
func (p *Proc) listUnder(ctx, callCtx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	pg, err := callUnder(ctx, callCtx, p, "ListHeads", func(ctx context.Context) (hoststore.HeadPage, error) {
		return p.wrap.ListHeads(ctx, kind, after, limit)
	})
	a := "nil"
	if after != nil {
		a = textsafe.Clip(fmt.Sprintf("%q", *after), 80)
	}
	res := ""
	if err == nil {
		res = fmt.Sprintf("%d heads, next %s", len(pg.Heads), NameText(pg.Next))
	}
	p.trace("ListHeads", fmt.Sprintf("%s, after %s, limit %d%s", kind, a, limit, ownContext(ctx, callCtx)), err, res)
	return pg, err
}

// Read calls ReadRows.
func (p *Proc) Read(ctx context.Context, s hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	return p.readUnder(ctx, ctx, s, from, limit)
}

// readUnder calls ReadRows under the caller's context callCtx (see runAs).
func (p *Proc) readUnder(ctx, callCtx context.Context, s hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	rows, err := callUnder(ctx, callCtx, p, "ReadRows", func(ctx context.Context) ([]hoststore.Row, error) { return p.wrap.ReadRows(ctx, s, from, limit) })
	res := ""
	if err == nil {
		res = fmt.Sprintf("%d rows", len(rows))
	}
	p.trace("ReadRows", fmt.Sprintf("%s, from %d, limit %d%s", s, from, limit, ownContext(ctx, callCtx)), err, res)
	return rows, err
}

// Commit calls Commit.
func (p *Proc) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	return p.CommitUnder(ctx, ctx, b)
}

// CommitUnder calls Commit under the caller's context callCtx, which may
// end while the spec's ctx goes on: the store must then stop and answer
// callCtx's error, unless the batch landed.
func (p *Proc) CommitUnder(ctx, callCtx context.Context, b *hoststore.CommitBatch) error {
	_, err := p.runAs(ctx, callCtx, "Commit", func(ctx context.Context) (any, error) { return nil, p.wrap.Commit(ctx, b) })
	p.trace("Commit", BatchText(b)+ownContext(ctx, callCtx), err, "")
	return err
}

// ownContext returns what a trail adds to a call made under the caller's
// own context callCtx rather than the spec's ctx: nothing for ctx itself.
func ownContext(ctx, callCtx context.Context) string {
	if callCtx == ctx {
		return ""
	}
	return ", under its caller's context, which ended"
}

func headText(h *hoststore.VersionedHead) string {
	if h == nil {
		return "none"
	}
	return fmt.Sprintf("v%d %q head %s", h.Version, h.CommitID, textsafe.Payload(h.Head))
}

// NameText returns a scope name as a trail shows it ("nil" for none).
func NameText(n *hoststore.ScopeName) string {
	if n == nil {
		return "nil"
	}
	return textsafe.Clip(fmt.Sprintf("%q", *n), 80)
}

// BatchText returns a batch as a trail shows it: id, token and updates.
func BatchText(b *hoststore.CommitBatch) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%q token %d:", b.CommitID(), b.Token())
	for i, u := range b.Updates() {
		if i > 0 {
			sb.WriteString(";")
		}
		sb.WriteString(" " + updateText(u))
	}
	return textsafe.Clip(sb.String(), 600)
}

func updateText(u hoststore.ScopeUpdate) string {
	var sb strings.Builder
	sb.WriteString(u.Scope.String())
	if u.Previous == nil {
		sb.WriteString(" create")
	} else {
		fmt.Fprintf(&sb, " v%d→v%d", *u.Previous, u.Next)
	}
	if u.Delete {
		sb.WriteString(" delete")
	}
	if u.TruncateAfter != nil {
		fmt.Fprintf(&sb, " truncate_after %d", *u.TruncateAfter)
	}
	if u.DropBefore != nil {
		fmt.Fprintf(&sb, " drop_before %d", *u.DropBefore)
	}
	if len(u.Append) > 0 {
		fmt.Fprintf(&sb, " append %d rows", len(u.Append))
	}
	if u.Head != nil {
		fmt.Fprintf(&sb, " head %s", textsafe.Payload(*u.Head))
	}
	return sb.String()
}

// IsHarnessErr tells whether err came from the harness's own faults (a
// kill, a crash) or is a breach it caught, rather than from the store.
func IsHarnessErr(err error) bool {
	var br *Breach
	return errors.Is(err, faults.ErrKilled) || errors.Is(err, instore.ErrCrashed) || errors.As(err, &br)
}

// CloseQuietly closes the process's handle gracefully, where it implements
// io.Closer; a close error is traced, not a finding.
func (p *Proc) CloseQuietly() {
	if c, ok := p.wrap.Inner().(io.Closer); ok {
		if err := c.Close(); err != nil {
			p.env.Tracef("%s close: %v", p.Name(), err)
		}
	}
}

// MatchID returns a commit matcher for a failpoint hold: it matches id only.
func MatchID(id hoststore.CommitID) func(hoststore.CommitID) bool {
	return func(c hoststore.CommitID) bool { return c == id }
}

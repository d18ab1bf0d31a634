package writer

import (
	"context"
	"errors"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
)

// acquire takes the fence with mode and records the grant: the new token,
// the self-fence base (when the acquire started) and, after superseding a
// live holder, the end of the takeover wait. It schedules the renewer.
func (w *Writer) acquire(ctx context.Context, mode hoststore.AcquireMode) error {
	start := w.clock.Now()
	g, err := w.st.AcquireFence(ctx, mode)
	if err != nil {
		w.logf("acquire %s: %v", mode, err)
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.token, w.base, w.fenced = g.Token, start, false
	if g.SupersededLease > 0 && !w.opts.Unsafe.SkipTakeoverWait {
		// The takeover wait: no model call or tool call until the old
		// holder's lease, as the store reported it, has run out.
		w.waitUntil = w.clock.Now().Add(g.SupersededLease)
	}
	w.logf("acquired %s: token %d, superseded lease %s", mode, g.Token, g.SupersededLease)
	w.scheduleRenewLocked()
	return nil
}

// scheduleRenewLocked sets the renewer to fire one renew interval after
// the base.
func (w *Writer) scheduleRenewLocked() {
	if w.renewT != nil {
		w.renewT.Stop()
	}
	if w.closed {
		return
	}
	d := w.base.Add(w.timing.RenewInterval()).Sub(w.clock.Now())
	w.renewT = w.clock.AfterFunc(d, w.renewTick)
}

// renewTick is the renewer. A holder whose window already closed does not
// renew, since a late renew must not let it write again; a failed renew fences
// it, and a renew returning *hoststore.FencedOutError stops the realm.
func (w *Writer) renewTick() {
	w.mu.Lock()
	if w.stateErrLocked() != nil {
		w.mu.Unlock()
		return
	}
	start := w.clock.Now()
	if start.Sub(w.base) >= w.timing.SelfFenceWindow() {
		w.fenced = true
		w.logf("renewer: the self-fence window closed before the renew; fenced")
		w.mu.Unlock()
		return
	}
	tok := w.token
	w.mu.Unlock()
	err := w.st.RenewFence(w.ctx, tok)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.token != tok || w.stateErrLocked() != nil {
		return // a fresh acquire, a stop or a close came meanwhile
	}
	if err != nil {
		w.fenced = true
		var fo *hoststore.FencedOutError
		if errors.As(err, &fo) {
			w.stopErr = stopped("renew of token %d: token %d took the fence", tok, fo.Current)
		}
		w.logf("renew of token %d failed: %v; fenced", tok, err)
		return
	}
	w.base = start
	w.scheduleRenewLocked()
}

// selfFenceLocked is the self-fence check: it takes no store request. It
// returns nil when the writer may commit, call the model or dispatch now: it is
// not fenced, and less than the self-fence window has gone by since its latest
// successful acquire or renew began. A closed window fences the writer.
func (w *Writer) selfFenceLocked() error {
	if err := w.stateErrLocked(); err != nil {
		if errors.Is(err, ErrSelfFenced) {
			return fmt.Errorf("%w (a renew failed or the window closed before)", ErrSelfFenced)
		}
		return err
	}
	if age := w.clock.Now().Sub(w.base); age >= w.timing.SelfFenceWindow() {
		w.fenced = true
		return fmt.Errorf("%w: the last acquire or renew started %s ago, the self-fence window is %s", ErrSelfFenced, age, w.timing.SelfFenceWindow())
	}
	return nil
}

// Refence makes the fresh acquire, with a new token, through which a fenced
// writer goes on; the next write calls it by itself. It is an exclusive
// acquire, and when that returns *hoststore.HeldError with the writer's own
// token, a takeover of the writer's own lease. It then loads every head again
// and settles its unknown batches from them; if another process holds the
// fence, or committed while this one was fenced, the realm stops (an error
// wrapping ErrStopped). A writer that is not fenced returns nil at once.
func (w *Writer) Refence(ctx context.Context) error {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	return w.refenceLocked(ctx)
}

// refenceLocked is Refence with cmu held.
func (w *Writer) refenceLocked(ctx context.Context) error {
	w.mu.Lock()
	if err := w.stateErrLocked(); !errors.Is(err, ErrSelfFenced) {
		w.mu.Unlock()
		return err
	}
	old := w.token
	if w.renewT != nil {
		w.renewT.Stop()
	}
	w.mu.Unlock()
	err := w.acquire(ctx, hoststore.Exclusive)
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		if held.Holder != old {
			return w.stop("a fresh acquire found token %d holding the fence (this writer had %d)", held.Holder, old)
		}
		// The lease is this writer's own, from before it fenced itself:
		// take it over.
		err = w.acquire(ctx, hoststore.Takeover)
	}
	if err != nil {
		return fmt.Errorf("writer: fresh acquire: %w", err)
	}
	loaded, err := w.bulkLoad(ctx)
	if err != nil {
		w.mu.Lock()
		w.fenced = true
		w.mu.Unlock()
		return fmt.Errorf("writer: loading after a fresh acquire: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settleFromLocked(loaded); err != nil {
		return err
	}
	if s, same := sameHeads(w.heads, loaded); !same {
		w.stopErr = stopped("scope %s changed while this writer was fenced: another process committed", s)
		return w.stopErr
	}
	w.logf("refenced: token %d (was %d)", w.token, old)
	return nil
}

// stop stops the realm with why and returns the error.
func (w *Writer) stop(format string, args ...any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopErr == nil {
		w.stopErr = stopped(format, args...)
	}
	w.fenced = true
	return w.stopErr
}

// Call is what a round's check is for.
type Call int

const (
	// ModelCall is a check before a model call.
	ModelCall Call = iota
	// ToolCall is a check at the last moment before a tool call, once the
	// round's pre-tool hooks have run.
	ToolCall
)

// String names the call.
func (c Call) String() string {
	if c == ToolCall {
		return "tool call"
	}
	return "model call"
}

// Round is one round of work: the checks before its calls, and its commit.
// Once a check refused a call, the round commits nothing.
type Round struct {
	w       *Writer
	refused error
}

// Round starts a round.
func (w *Writer) Round() *Round { return &Round{w: w} }

// Refused returns the check that refused a call of the round, or nil.
func (r *Round) Refused() error { return r.refused }

// Check is the self-fence check before a model call or right before a tool
// call starts. After an acquire that superseded a live holder it first
// waits out that holder's lease on the writer's clock. It takes no store
// request. A refusal (ErrSelfFenced, ErrStopped, ErrClosed, or ctx ending
// during the wait) means the call must not start, and the round's Commit
// will refuse.
func (r *Round) Check(ctx context.Context, c Call) error {
	if r.refused != nil {
		return r.refused
	}
	if err := r.w.check(ctx, c); err != nil {
		r.refused = fmt.Errorf("%s refused: %w", c, err)
		return r.refused
	}
	return nil
}

func (w *Writer) check(ctx context.Context, c Call) error {
	w.mu.Lock()
	wait := w.waitUntil.Sub(w.clock.Now())
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if wait > 0 {
		w.logf("%s: waiting out the superseded lease, %s", c, wait)
		if err := w.clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	if w.opts.Unsafe.SkipSelfFence {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.selfFenceLocked()
}

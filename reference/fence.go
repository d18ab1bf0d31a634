package reference

import (
	"fmt"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// fence is the realm's fence record ("Fence Leases"): the highest token
// issued and the lease expiry of its holder on the store's clock.
//
// mu orders acquires against commit points (obligation 5, "Fencing"): an
// acquire or renew takes it exclusively; a commit takes it shared only
// around its token check and its commit point, a few atomic steps, never
// across a failpoint, a scope lock or any other wait. So a batch whose
// commit point follows an acquire of a higher token is refused, and every
// batch whose commit point came first stays visible. No commit ever waits
// for another commit because of mu: a shared holder only ever waits for an
// acquire or renew, which itself waits only for shared holders that are
// already inside their few-step sections.
type fence struct {
	mu     sync.RWMutex
	token  hoststore.FenceToken
	expiry time.Time
}

// acquire issues the next token and records its lease from now on c
// ("acquire_fence"). Exclusive with a live holder (now before its expiry)
// answers *HeldError with the holder and what remains of its lease.
// Takeover always issues a token and reports the live holder's remaining
// lease, zero when none is live.
func (f *fence) acquire(mode hoststore.AcquireMode, c *Clock, lease time.Duration) (hoststore.FenceGrant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := c.Now()
	var remaining time.Duration
	if f.token > 0 && now.Before(f.expiry) {
		remaining = f.expiry.Sub(now)
	}
	switch mode {
	case hoststore.Exclusive:
		if remaining > 0 {
			return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: f.token, Remaining: remaining}
		}
	case hoststore.Takeover:
	default:
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: fmt.Sprintf("acquire_fence mode %d is not a mode", uint8(mode))}
	}
	f.token++
	f.expiry = now.Add(lease)
	return hoststore.FenceGrant{Token: f.token, SupersededLease: remaining}, nil
}

// renew records a new lease from now for the holder of token, also when
// its last lease lapsed ("renew_fence"). A superseded token answers
// *FencedOutError; a token never issued (0, or above the highest)
// answers *InvalidError.
func (f *fence) renew(token hoststore.FenceToken, c *Clock, lease time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLocked("renew_fence", token); err != nil {
		return err
	}
	f.expiry = c.Now().Add(lease)
	return nil
}

// check answers whether a batch carrying token may commit now.
func (f *fence) check(token hoststore.FenceToken) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.checkLocked("commit", token)
}

// checkLocked: a token below the highest is *FencedOutError ("A token
// higher than the caller's exists"); 0 or above the highest was never
// issued and is *InvalidError. Called with mu held, shared or exclusive.
func (f *fence) checkLocked(op string, token hoststore.FenceToken) error {
	switch {
	case token == 0 || token > f.token:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("%s with token %d, which was never issued (highest %d)", op, token, f.token)}
	case token < f.token:
		return &hoststore.FencedOutError{Current: f.token}
	}
	return nil
}

// lapse advances c just past the recorded lease's expiry (by nothing when
// it already ran out). It holds mu, so no acquire or renew reads the clock
// in between.
func (f *fence) lapse(c *Clock) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := c.Now(); now.Before(f.expiry) {
		c.Advance(f.expiry.Sub(now) + time.Nanosecond)
	}
}

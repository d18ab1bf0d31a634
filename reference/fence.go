package reference

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// pointShards is how many locks the commit points of a realm spread over.
const pointShards = 16

// fence is the realm's fence record: the highest token issued and the
// lease expiry of its holder on the store's clock
// (docs/host-store-contract.md#fence-leases).
//
// Fencing (obligation 5) orders acquires against commit points. A commit
// holds one of the point locks shared around its token check and its
// commit point only: a few atomic steps, never across a failpoint, a scope
// lock or any other wait. An acquire that issues a token holds every point
// lock exclusively while it moves the token. So a commit point either
// comes wholly before the acquire, and its batch stays visible, or after
// it, and its batch is refused. Commits of scopes in different shards
// share no lock at all; commits of one shard share a read lock, so no
// commit ever waits for another commit because of it, only for an
// acquire's few steps. Renew and lapse never touch the point locks.
type fence struct {
	mu     sync.Mutex // serialises acquire, renew and lapse
	points [pointShards]pointLock
	token  atomic.Uint64 // written under mu and every point lock
	expiry time.Time     // under mu
}

type pointLock struct {
	sync.RWMutex
	_ [40]byte // one lock per cache line
}

// acquire issues the next token and records its lease from now on c, for
// AcquireFence. Exclusive with a live holder (now before its expiry)
// returns *HeldError with the holder and what remains of its lease.
// Takeover always issues a token and reports the live holder's remaining
// lease, zero when none is live.
func (f *fence) acquire(mode hoststore.AcquireMode, c *Clock, lease time.Duration) (hoststore.FenceGrant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := c.Now()
	cur := hoststore.FenceToken(f.token.Load())
	var remaining time.Duration
	if cur > 0 && now.Before(f.expiry) {
		remaining = f.expiry.Sub(now)
	}
	switch mode {
	case hoststore.Exclusive:
		if remaining > 0 {
			return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: cur, Remaining: remaining}
		}
	case hoststore.Takeover:
	default:
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: fmt.Sprintf("AcquireFence mode %d is not a mode", uint8(mode))}
	}
	for i := range f.points {
		f.points[i].Lock()
	}
	f.token.Store(uint64(cur + 1))
	for i := range f.points {
		f.points[i].Unlock()
	}
	f.expiry = now.Add(lease)
	return hoststore.FenceGrant{Token: cur + 1, SupersededLease: remaining}, nil
}

// renew records a new lease from now for the holder of token, also when
// its last lease lapsed, for RenewFence. A superseded token returns
// *FencedOutError; a token never issued (0, or above the highest)
// returns *InvalidError.
func (f *fence) renew(token hoststore.FenceToken, c *Clock, lease time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("RenewFence", token); err != nil {
		return err
	}
	f.expiry = c.Now().Add(lease)
	return nil
}

// check returns nil when token is the highest issued. A lower token
// returns *FencedOutError naming the highest; 0, or a token above the
// highest, was never issued and returns *InvalidError. Without a point lock held the
// answer is only a hint: the token may move right after.
func (f *fence) check(op string, token hoststore.FenceToken) error {
	cur := hoststore.FenceToken(f.token.Load())
	switch {
	case token == 0 || token > cur:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("%s with token %d, which was never issued (highest %d)", op, token, cur)}
	case token < cur:
		return &hoststore.FencedOutError{Current: cur}
	}
	return nil
}

// pointLock returns the point lock of shard: a commit holds it shared
// (RLock) around its token check and commit point, so that no acquire
// moves the token in between; those must be a few atomic steps.
func (f *fence) pointLock(shard uint8) *sync.RWMutex {
	return &f.points[shard%pointShards].RWMutex
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

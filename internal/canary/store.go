package canary

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Factory stands for one in-memory realm, which starts empty, with the bugs
// it was made with. It implements hoststore.HostStoreFactory.
type Factory struct {
	r *realm
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// NewFactory returns a factory over a new, empty realm whose handles have
// bugs (0: a correct store).
func NewFactory(bugs Bugs) *Factory {
	return &Factory{r: &realm{
		bugs:   bugs,
		timing: hoststore.DefaultFenceTiming(),
		scopes: map[hoststore.ScopeRef]*scope{},
		landed: map[hoststore.CommitID]bool{},
		lied:   map[hoststore.CommitID]bool{},
	}}
}

// Bugs returns the bugs the realm was made with.
func (f *Factory) Bugs() Bugs { return f.r.bugs }

// Open returns a new handle on the realm, standing for a new process: it
// shares the realm's data with earlier handles and no state of theirs.
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.r.gone.Load() {
		return nil, errGone()
	}
	return &Store{r: f.r}, nil
}

// LapseFenceLeases moves the realm's manual clock to the end of the
// recorded lease, so that no holder is live ("every recorded lease runs
// out"). It does nothing when no lease is live.
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.r.gone.Load() {
		return errGone()
	}
	r := f.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leaseEnd > r.now {
		r.now = r.leaseEnd
	}
	return nil
}

// realm is the state every handle of one factory shares, under mu.
type realm struct {
	bugs   Bugs
	timing hoststore.FenceTiming

	// commitMu is the realm-wide commit lock of the RealmLock bug; a
	// correct store never takes it.
	commitMu sync.Mutex

	mu sync.Mutex
	// now is the manual clock, as time since the realm started; only
	// LapseFenceLeases moves it.
	now time.Duration
	// token is the highest token issued (0: none); leaseEnd is when its
	// holder's recorded lease ends on the manual clock.
	token    hoststore.FenceToken
	leaseEnd time.Duration
	// scopes holds every scope ever created, deleted ones as tombstones.
	scopes map[hoststore.ScopeRef]*scope
	// landed holds the commit id of every batch past its commit point.
	landed map[hoststore.CommitID]bool
	// lied holds the batches UnavailableAfterApply returned Unavailable for.
	lied map[hoststore.CommitID]bool

	// commits counts the realm's commits, for HangsCommit, StuckCommits
	// and Outage.
	commits atomic.Int64
	// leaked holds the scopes whose lock LeaksScopeLock kept.
	leaked map[hoststore.ScopeRef]bool
	// gone is set once the Outage bug lost the realm's server.
	gone atomic.Bool
}

// OutageAt is the commit of a realm, counting from 1, at which the Outage
// bug loses the realm's server.
const OutageAt = 8

// errGone is what every call answers once the Outage bug lost the server.
func errGone() error {
	return &hoststore.UnavailableError{Detail: "canary: the realm's server is gone"}
}

// HangCommitAt is which commit of a realm, counting from 1, the
// HangsCommit bug blocks forever, and the first that StuckCommits blocks.
const HangCommitAt = 8

// never is what a commit that HangsCommit blocks waits on: nothing ever
// closes it.
var never = make(chan struct{})

// key is where the realm keeps ref: ref itself, or under PadSpace its name
// without trailing spaces.
func (r *realm) key(ref hoststore.ScopeRef) hoststore.ScopeRef {
	if r.bugs.Has(PadSpace) {
		ref.Name = hoststore.ScopeName(strings.TrimRight(string(ref.Name), " "))
	}
	return ref
}

// scope is one scope's state. Its rows are those with indices
// [start, end), rows[i] having index start+i.
type scope struct {
	name     hoststore.ScopeName // as its creating batch spelled it
	version  hoststore.ScopeVersion
	commitID hoststore.CommitID
	head     []byte
	start    hoststore.RowIndex
	end      hoststore.RowIndex
	rows     [][]byte
	deleted  bool
	// lateTruncate is the truncation the LateTruncate bug put off to the
	// scope's next batch.
	lateTruncate *hoststore.RowIndex
}

// live reports whether s is a visible scope: created and not deleted.
func (s *scope) live() bool { return s != nil && !s.deleted }

// Store is one handle over a realm. It implements hoststore.HostStore,
// hoststore.Killer and io.Closer. Without bugs it meets every obligation at
// commit: a stale token is FencedOut, a wrong Previous is Conflict, and a
// commit id that already landed returns nil without acting again.
type Store struct {
	r      *realm
	killed atomic.Bool

	// pending holds the batches the LostOnKill bug returned nil to without
	// applying them.
	pmu     sync.Mutex
	pending []*hoststore.CommitBatch
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
)

// Kill kills the handle, as a process dying: every later call returns
// *hoststore.UnavailableError, a commit in flight that has not reached its
// commit point applies nothing, and (LostOnKill) what the handle still
// kept is lost.
func (s *Store) Kill() {
	s.killed.Store(true)
	s.pmu.Lock()
	s.pending = nil
	s.pmu.Unlock()
}

// Close ends the handle gracefully: what it kept (LostOnKill) is applied
// first. Later calls return *hoststore.UnavailableError.
func (s *Store) Close() error {
	if s.killed.Load() {
		return nil
	}
	s.flush()
	s.killed.Store(true)
	return nil
}

// enter is the start of every call: the context must be live and the
// handle alive; under LostOnKill, the batches kept from earlier commits
// are applied now.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.killed.Load() {
		return &hoststore.UnavailableError{Detail: "the handle was killed or closed"}
	}
	if s.r.gone.Load() {
		return errGone()
	}
	s.flush()
	return nil
}

// flush applies the batches LostOnKill kept. It takes and applies them in
// one step under the realm's mutex, so a commit after it sees them. A kept
// batch that no longer applies (its scopes moved on meanwhile) is dropped:
// losing it is the bug.
func (s *Store) flush() {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	s.pmu.Lock()
	kept := s.pending
	s.pending = nil
	s.pmu.Unlock()
	for _, b := range kept {
		_ = r.pointLocked(b) // a batch that no longer applies is lost: the bug
	}
}

// FenceTiming is the default timing: 10 s renew, 30 s lease.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.r.timing }

// AcquireFence issues a token above every earlier one and records a lease
// for it from now. Exclusive returns *HeldError while the holder of the
// highest token is live; Takeover supersedes it and reports what remained
// of its lease.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	if err := s.enter(ctx); err != nil {
		return hoststore.FenceGrant{}, err
	}
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	var remaining time.Duration
	if r.token > 0 && r.leaseEnd > r.now {
		remaining = r.leaseEnd - r.now
	}
	switch mode {
	case hoststore.Exclusive:
		if remaining > 0 && !r.bugs.Has(ExclusiveIgnoresHolder) {
			return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: r.token, Remaining: remaining}
		}
		remaining = 0
	case hoststore.Takeover:
	default:
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: "unknown acquire mode " + mode.String()}
	}
	r.token++
	r.leaseEnd = r.now + r.timing.Lease()
	return hoststore.FenceGrant{Token: r.token, SupersededLease: remaining}, nil
}

// RenewFence records a new lease from now for the holder of token, also
// when its last lease lapsed. A superseded token is *FencedOutError; a
// token the store never issued is *InvalidError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case token == 0 || token > r.token:
		return &hoststore.InvalidError{Detail: "renew of a token the store never issued"}
	case token < r.token:
		if r.bugs.Has(RenewNeverFenced) {
			return nil
		}
		return &hoststore.FencedOutError{Current: r.token}
	case r.bugs.Has(NoRenewAfterLapse) && r.leaseEnd <= r.now:
		return &hoststore.FencedOutError{Current: r.token}
	}
	r.leaseEnd = r.now + r.timing.Lease()
	return nil
}

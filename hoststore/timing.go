package hoststore

import (
	"context"
	"fmt"
	"time"
)

var (
	errContextCanceled  = context.Canceled
	errDeadlineExceeded = context.DeadlineExceeded
)

// Fence timing constants ("Fence Leases" in the spec).
const (
	// FenceRenewInterval is the default renew interval: 10 s.
	FenceRenewInterval = 10 * time.Second
	// FenceLease is the default lease: 30 s.
	FenceLease = 30 * time.Second
	// FenceMinLeaseRenewals: a lease lasts at least this many renew intervals.
	FenceMinLeaseRenewals = 3
	// MinRenewInterval is the shortest renew interval: 1 s.
	MinRenewInterval = time.Second
	// MaxLease is the longest lease: 1 hour.
	MaxLease = time.Hour
	// FenceMaxCommitLatency is the default longest commit: 2 s.
	FenceMaxCommitLatency = 2 * time.Second
)

// FenceTiming is the renew interval, lease, self-fence margin and longest
// commit a store declares. Its constructors enforce the spec's bounds; the
// zero value is not valid, use DefaultFenceTiming.
type FenceTiming struct {
	renew, lease, margin, maxCommit time.Duration
}

// DefaultFenceTiming is 10 s renew, 30 s lease, a margin of one renew
// interval and a longest commit of 2 s.
func DefaultFenceTiming() FenceTiming {
	return FenceTiming{renew: FenceRenewInterval, lease: FenceLease, margin: FenceRenewInterval, maxCommit: FenceMaxCommitLatency}
}

// NewFenceTiming builds a timing with the margin of one renew interval
// (try_new). It refuses a renew interval below MinRenewInterval, a lease
// below FenceMinLeaseRenewals renew intervals or above MaxLease.
func NewFenceTiming(renew, lease time.Duration) (FenceTiming, error) {
	return NewFenceTimingWithMargin(renew, lease, renew)
}

// NewFenceTimingWithMargin builds a timing with a declared self-fence margin
// (try_with_margin). Beyond NewFenceTiming's bounds it refuses a margin below
// one renew interval and a self-fence window (lease minus margin) below two
// renew intervals.
func NewFenceTimingWithMargin(renew, lease, margin time.Duration) (FenceTiming, error) {
	if renew < MinRenewInterval {
		return FenceTiming{}, fmt.Errorf("fence timing: renew interval %s is below the minimum %s", renew, MinRenewInterval)
	}
	if lease > MaxLease {
		return FenceTiming{}, fmt.Errorf("fence timing: lease %s is above the maximum %s", lease, MaxLease)
	}
	// lease < FenceMinLeaseRenewals*renew, written as a division so that a
	// huge renew interval cannot overflow the product and slip through.
	if lease/FenceMinLeaseRenewals < renew {
		return FenceTiming{}, fmt.Errorf("fence timing: lease %s is below %d renew intervals of %s", lease, FenceMinLeaseRenewals, renew)
	}
	if margin < renew {
		return FenceTiming{}, fmt.Errorf("fence timing: self-fence margin %s is below one renew interval %s", margin, renew)
	}
	if lease-margin < 2*renew {
		return FenceTiming{}, fmt.Errorf("fence timing: self-fence window %s (lease %s minus margin %s) is below two renew intervals of %s", lease-margin, lease, margin, renew)
	}
	return FenceTiming{renew: renew, lease: lease, margin: margin, maxCommit: FenceMaxCommitLatency}, nil
}

// WithMaxCommitLatency declares the longest commit
// (try_with_max_commit_latency): longer than zero, at most the lease.
func (t FenceTiming) WithMaxCommitLatency(d time.Duration) (FenceTiming, error) {
	if d <= 0 {
		return FenceTiming{}, fmt.Errorf("fence timing: longest commit %s is not longer than zero", d)
	}
	if d > t.lease {
		return FenceTiming{}, fmt.Errorf("fence timing: longest commit %s is above the lease %s", d, t.lease)
	}
	t.maxCommit = d
	return t, nil
}

// RenewInterval is how often the holder renews.
func (t FenceTiming) RenewInterval() time.Duration { return t.renew }

// Lease is how long a recorded lease lasts from the holder's last acquire or renew.
func (t FenceTiming) Lease() time.Duration { return t.lease }

// SelfFenceMargin is how long before its lease ends the holder stops.
func (t FenceTiming) SelfFenceMargin() time.Duration { return t.margin }

// SelfFenceWindow is the lease minus the self-fence margin.
func (t FenceTiming) SelfFenceWindow() time.Duration { return t.lease - t.margin }

// MaxCommitLatency is the longest one commit can take on the backend.
func (t FenceTiming) MaxCommitLatency() time.Duration { return t.maxCommit }

// Valid reports whether t came from a constructor (the zero value did not).
func (t FenceTiming) Valid() bool { return t.renew >= MinRenewInterval }

// String renders the four settings.
func (t FenceTiming) String() string {
	return fmt.Sprintf("renew %s, lease %s, margin %s, longest commit %s", t.renew, t.lease, t.margin, t.maxCommit)
}

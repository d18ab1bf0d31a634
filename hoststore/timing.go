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

// Defaults and bounds of FenceTiming (docs/host-store-contract.md#fence-timing).
const (
	// FenceRenewInterval is the default renew interval: 10 s.
	FenceRenewInterval = 10 * time.Second
	// FenceLease is the default lease: 30 s.
	FenceLease = 30 * time.Second
	// FenceMinLeaseRenewals is the least number of renew intervals a lease
	// lasts: 3.
	FenceMinLeaseRenewals = 3
	// MinRenewInterval is the shortest renew interval: 1 s.
	MinRenewInterval = time.Second
	// MaxLease is the longest lease: 1 hour.
	MaxLease = time.Hour
	// FenceMaxCommitLatency is the default longest commit: 2 s.
	FenceMaxCommitLatency = 2 * time.Second
)

// FenceTiming is the renew interval, lease, self-fence margin and longest
// commit a store declares (docs/host-store-contract.md#fence-timing). Its
// constructors keep every setting within bounds. The zero value is not
// valid; use DefaultFenceTiming or a constructor.
type FenceTiming struct {
	renew, lease, margin, maxCommit time.Duration
}

// DefaultFenceTiming returns a renew interval of 10 s, a lease of 30 s, a
// margin of one renew interval and a longest commit of 2 s.
func DefaultFenceTiming() FenceTiming {
	return FenceTiming{renew: FenceRenewInterval, lease: FenceLease, margin: FenceRenewInterval, maxCommit: FenceMaxCommitLatency}
}

// NewFenceTiming returns a timing with a margin of one renew interval and
// the default longest commit. It returns an error for a renew interval below
// MinRenewInterval, or a lease below FenceMinLeaseRenewals renew intervals
// or above MaxLease.
func NewFenceTiming(renew, lease time.Duration) (FenceTiming, error) {
	return NewFenceTimingWithMargin(renew, lease, renew)
}

// NewFenceTimingWithMargin returns a timing with the given self-fence
// margin and the default longest commit. Besides NewFenceTiming's errors, it
// returns an error unless the margin is at least one renew interval and
// the self-fence window (lease minus margin) at least two.
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

// WithMaxCommitLatency returns t with its longest commit set to d. It
// returns an error unless d is above zero and at most the lease.
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

// RenewInterval returns how often the holder renews.
func (t FenceTiming) RenewInterval() time.Duration { return t.renew }

// Lease returns how long a lease lasts on the store's clock, counted from
// the start of the holder's latest acquire or renew.
func (t FenceTiming) Lease() time.Duration { return t.lease }

// SelfFenceMargin returns how long before its lease ends the holder stops
// writing.
func (t FenceTiming) SelfFenceMargin() time.Duration { return t.margin }

// SelfFenceWindow returns how long the holder may write after its latest
// acquire or renew began: the lease less the self-fence margin.
func (t FenceTiming) SelfFenceWindow() time.Duration { return t.lease - t.margin }

// MaxCommitLatency returns the longest time one commit may take on the
// store's backend.
func (t FenceTiming) MaxCommitLatency() time.Duration { return t.maxCommit }

// Valid reports whether t came from a constructor (the zero value did not).
func (t FenceTiming) Valid() bool { return t.renew >= MinRenewInterval }

// String returns the four settings, as "renew 10s, lease 30s, margin 10s,
// longest commit 2s".
func (t FenceTiming) String() string {
	return fmt.Sprintf("renew %s, lease %s, margin %s, longest commit %s", t.renew, t.lease, t.margin, t.maxCommit)
}

//go:build conformcanary

package main

// Built with -tags conformcanary, the command also opens two correct but
// slow stores, for the end-to-end tests of how the harness judges time:
//
//	slow:LATENCY     the reference store behind LATENCY of network latency:
//	                 every Open and every call waits LATENCY first
//	lapsewait:LEASE  the reference store declaring a lease of LEASE (renew
//	                 LEASE/3), whose LapseFenceLeases lets the leases run out
//	                 by waiting LEASE on the wall clock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/ctxtime"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reference"
)

// slowStore is a handle that waits its latency before every call.
type slowStore struct {
	hoststore.HostStore
	latency time.Duration
}

func (s slowStore) AcquireFence(ctx context.Context, m hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return hoststore.FenceGrant{}, err
	}
	return s.HostStore.AcquireFence(ctx, m)
}

func (s slowStore) RenewFence(ctx context.Context, t hoststore.FenceToken) error {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return err
	}
	return s.HostStore.RenewFence(ctx, t)
}

func (s slowStore) LoadHead(ctx context.Context, sc hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return nil, err
	}
	return s.HostStore.LoadHead(ctx, sc)
}

func (s slowStore) ListHeads(ctx context.Context, k hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return hoststore.HeadPage{}, err
	}
	return s.HostStore.ListHeads(ctx, k, after, limit)
}

func (s slowStore) ReadRows(ctx context.Context, sc hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return nil, err
	}
	return s.HostStore.ReadRows(ctx, sc, from, limit)
}

func (s slowStore) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	if err := ctxtime.Sleep(ctx, s.latency); err != nil {
		return err
	}
	return s.HostStore.Commit(ctx, b)
}

// Kill kills the inner handle.
func (s slowStore) Kill() {
	if k, ok := s.HostStore.(hoststore.Killer); ok {
		k.Kill()
	}
}

type slowFactory struct {
	*reference.Factory
	latency time.Duration
}

func (f slowFactory) Open(ctx context.Context) (hoststore.HostStore, error) {
	if err := ctxtime.Sleep(ctx, f.latency); err != nil {
		return nil, err
	}
	st, err := f.Factory.Open(ctx)
	if err != nil {
		return nil, err
	}
	return slowStore{st, f.latency}, nil
}

// lapseWaitFactory lets the leases run out by waiting the declared lease.
type lapseWaitFactory struct {
	*reference.Factory
	lease time.Duration
}

func (f lapseWaitFactory) LapseFenceLeases(ctx context.Context) error {
	if err := ctxtime.Sleep(ctx, f.lease); err != nil {
		return err
	}
	return f.Factory.LapseFenceLeases(ctx)
}

// durationAfter parses what follows scheme in url as a duration.
func durationAfter(scheme, url string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimPrefix(url, scheme+":"))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want %s:DURATION, e.g. %s:60ms", scheme, scheme, scheme)
	}
	return d, nil
}

func init() {
	extraOpeners["slow"] = func(_ context.Context, url string) (engine.NewRealm, error) {
		d, err := durationAfter("slow", url)
		if err != nil {
			return nil, err
		}
		return func(context.Context) (hoststore.HostStoreFactory, error) {
			return slowFactory{reference.NewFactory(), d}, nil
		}, nil
	}
	extraOpeners["lapsewait"] = func(_ context.Context, url string) (engine.NewRealm, error) {
		d, err := durationAfter("lapsewait", url)
		if err != nil {
			return nil, err
		}
		t, err := hoststore.NewFenceTiming(d/3, d)
		if err != nil {
			return nil, fmt.Errorf("lapsewait: %v", err)
		}
		return func(context.Context) (hoststore.HostStoreFactory, error) {
			return lapseWaitFactory{reference.NewFactory(reference.WithTiming(t)), d}, nil
		}, nil
	}
}

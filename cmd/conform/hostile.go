//go:build conformcanary

package main

import (
	"context"
	"errors"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// hostileText is what the hostile store says: markup, terminal escapes,
// a NUL and Markdown table syntax, which every report must escape.
const hostileText = "<script>alert('conform')</script>\x1b[31mred\x00|`pipe`|"

// hostileStore is the reference store, except that listing Identity scopes
// returns an error outside the contract carrying hostileText.
type hostileStore struct{ hoststore.HostStore }

func (h hostileStore) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if kind == hoststore.KindIdentity {
		return hoststore.HeadPage{}, errors.New(hostileText)
	}
	return h.HostStore.ListHeads(ctx, kind, after, limit)
}

type hostileFactory struct{ *reference.Factory }

func (f hostileFactory) Open(ctx context.Context) (hoststore.HostStore, error) {
	st, err := f.Factory.Open(ctx)
	if err != nil {
		return nil, err
	}
	return hostileStore{st}, nil
}

func init() {
	extraOpeners["hostile"] = func(context.Context, string) (harness.NewRealm, error) {
		return func(context.Context) (hoststore.HostStoreFactory, error) {
			return hostileFactory{reference.NewFactory()}, nil
		}, nil
	}
}

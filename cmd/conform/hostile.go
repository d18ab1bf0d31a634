//go:build conformcanary

package main

import (
	"context"
	"errors"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
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

// init adds the opener of hostile:, the hostile store. For the URL
// hostile:open-error it returns an error carrying hostileText and a forged
// line; for hostile:realm-error, a realm that cannot be made, with the
// same.
func init() {
	extraOpeners["hostile"] = func(_ context.Context, url string) (engine.NewRealm, error) {
		switch url {
		case "hostile:open-error":
			return nil, errors.New(hostileText + "\nconform run: forged line")
		case "hostile:realm-error":
			return func(context.Context) (hoststore.HostStoreFactory, error) {
				return nil, errors.New(hostileText + "\nconform run: forged line")
			}, nil
		}
		return func(context.Context) (hoststore.HostStoreFactory, error) {
			return hostileFactory{reference.NewFactory()}, nil
		}, nil
	}
}

//go:build conformcanary

package main

// Built with -tags conformcanary (the end-to-end tests do), the command also
// opens the deliberately broken stores the harness is tested with, as
// canary:NAME. The shipped command does not carry them.

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/engine"
)

func init() {
	extraOpeners["canary"] = func(_ context.Context, url string) (engine.NewRealm, error) {
		name := url[len("canary:"):]
		bugs, err := canary.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("canary store: %v", err)
		}
		return func(context.Context) (hoststore.HostStoreFactory, error) { return canary.NewFactory(bugs), nil }, nil
	}
}

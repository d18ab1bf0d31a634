package main

import (
	"context"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/procstore"
)

func init() { extraOpeners["exec"] = openExec }

// openExec opens exec:PROGRAM ARGS…, a store process
// (docs/store-process-protocol.md): every realm is a new temporary
// directory, and every Open a new process of the program over it.
func openExec(_ context.Context, url string) (engine.NewRealm, error) {
	argv, err := procstore.ParseCommand(strings.TrimPrefix(url, "exec:"))
	if err != nil {
		return nil, err
	}
	return func(context.Context) (hoststore.HostStoreFactory, error) { return procstore.New(argv) }, nil
}

// Command conform-serve serves one of conform's Go stores as a store
// process (docs/store-process-protocol.md), for conform run --store
// 'exec:conform-serve STORE':
//
//	conform-serve reference    # the in-memory reference store, in a daemon per realm
//	conform-serve sqlite       # stores/sqlite, the realm's file in $CONFORM_REALM
//	conform-serve appendonly   # stores/appendonly over SQLite, likewise
//
// Each process serves one handle on its standard input and output. For
// sqlite and appendonly, the realm's durable state is a file in the
// directory CONFORM_REALM names, so every process of a realm sees what the
// others committed. The reference store lives in memory: its processes
// share it through a daemon (see reference.go).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/stores/appendonly"
	"github.com/conform-spi/conform/stores/sqlite"
)

// stdout is where the process writes its messages.
var stdout io.Writer = os.Stdout

func main() {
	store := "sqlite"
	if len(os.Args) > 1 {
		store = os.Args[1]
	}
	switch store {
	case "reference":
		realm := os.Getenv("CONFORM_REALM")
		if realm == "" {
			fmt.Fprintln(os.Stderr, "conform-serve: CONFORM_REALM names no realm")
			os.Exit(1)
		}
		if err := proxyReference(realm); err != nil {
			fmt.Fprintln(os.Stderr, "conform-serve reference:", err)
			os.Exit(1)
		}
	case daemonArg:
		if err := runDaemon(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "conform-serve reference daemon:", err)
			os.Exit(1)
		}
	case "sqlite":
		serve.MainWith(stdout, "sqlite", func(ctx context.Context, realm string) (hoststore.HostStoreFactory, error) {
			return sqlite.New(ctx, filepath.Join(realm, "realm.db"))
		})
	case "appendonly":
		serve.MainWith(stdout, "appendonly+sqlite", func(ctx context.Context, realm string) (hoststore.HostStoreFactory, error) {
			return appendonly.New(ctx, filepath.Join(realm, "realm.db"))
		})
	default:
		fmt.Fprintf(os.Stderr, "conform-serve: unknown store %q; the stores are reference, sqlite and appendonly\n", store)
		os.Exit(2)
	}
}

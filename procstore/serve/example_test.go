package serve_test

import (
	"context"
	"path/filepath"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/stores/sqlite"
)

// A store's serving program is its main: it opens the realm the harness
// names, one file per realm here, and serves one handle on standard input
// and output. Certify it with
//
//	conform run --store 'exec:./mystore-serve'
func ExampleMain() {
	serve.Main("mystore", func(ctx context.Context, realm string) (hoststore.HostStoreFactory, error) {
		return sqlite.New(ctx, filepath.Join(realm, "realm.db"))
	})
}

package procstore_test

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore"
)

// A store written in Python certified with go test: every chapter gets a
// fresh realm, a temporary directory that Close removes, and every Open
// starts the script anew over it.
func Example() {
	var t *testing.T // the test's
	harness.Run(t, func(context.Context) (hoststore.HostStoreFactory, error) {
		return procstore.New([]string{"python3", "examples/python-sqlite/store.py"})
	}, harness.WithStore("exec:python3 examples/python-sqlite/store.py"))
}

package memlog

import (
	"context"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// SetAt makes Commit call f at the in-store sites instead of instore.At,
// until the returned function restores instore.At. A test calls it before
// any commit runs and restores it once every commit returned.
func SetAt(f func(context.Context, instore.Site, hoststore.CommitID) error) (restore func()) {
	at = f
	return func() { at = instore.At }
}

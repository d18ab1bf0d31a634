package sqlite_test

import (
	"testing"

	"github.com/conform-spi/conform/internal/storetest"
	"github.com/conform-spi/conform/stores/internal/sqlitedb/sqlitedbtest"
	"github.com/conform-spi/conform/stores/sqlite"
)

// pkg describes this store to the tests it shares with stores/appendonly.
var pkg = sqlitedbtest.Package[*sqlite.Factory, sqlite.Option]{
	Name:            "sqlite",
	Scheme:          "sqlite",
	OtherSchemes:    []string{"appendonly+sqlite"},
	NewRealm:        sqlite.NewRealm,
	OpenURL:         sqlite.OpenURL,
	WithFenceTiming: sqlite.WithFenceTiming,
	WithBusyTimeout: sqlite.WithBusyTimeout,
}

func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: pkg.NewFactory, RefusesAtCommit: true, RefusesDeletedName: true})
}

// TestRealm checks the realm's URL form, options and Close.
func TestRealm(t *testing.T) { pkg.TestRealm(t) }

func BenchmarkCommitSmall(b *testing.B) { storetest.BenchCommitSmall(b, pkg.NewFactory) }

func BenchmarkCommitParallel64(b *testing.B) { storetest.BenchCommitParallel(b, pkg.NewFactory, 64) }

func BenchmarkCommitParallel64Over8Handles(b *testing.B) {
	storetest.BenchCommitParallelHandles(b, pkg.NewFactory, 64, 8)
}

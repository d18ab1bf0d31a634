package appendonly_test

import (
	"testing"

	"github.com/conform-spi/conform/internal/storetest"
	"github.com/conform-spi/conform/stores/appendonly"
	"github.com/conform-spi/conform/stores/internal/sqlitedb/sqlitedbtest"
)

// pkg describes this store to the tests it shares with stores/sqlite.
var pkg = sqlitedbtest.Package[*appendonly.Factory, appendonly.Option]{
	Name:            "appendonly",
	Scheme:          "appendonly+sqlite",
	OtherSchemes:    []string{"sqlite"},
	NewRealm:        appendonly.NewRealm,
	OpenURL:         appendonly.OpenURL,
	WithFenceTiming: appendonly.WithFenceTiming,
	WithBusyTimeout: appendonly.WithBusyTimeout,
}

func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: pkg.NewFactory})
}

// TestRealm checks the realm's URL form, options and Close.
func TestRealm(t *testing.T) { pkg.TestRealm(t) }

func BenchmarkCommitSmall(b *testing.B) { storetest.BenchCommitSmall(b, pkg.NewFactory) }

func BenchmarkCommitParallel64(b *testing.B) { storetest.BenchCommitParallel(b, pkg.NewFactory, 64) }

func BenchmarkCommitParallel64Over8Handles(b *testing.B) {
	storetest.BenchCommitParallelHandles(b, pkg.NewFactory, 64, 8)
}

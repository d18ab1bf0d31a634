package engine

import (
	"testing"

	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reports"
)

// maxRepro bounds one value of a repro string.
const maxRepro = settings.MaxRepro

// RunTB is Run for any testing.TB, for a test that watches a run fail.
func RunTB(tb testing.TB, newRealm NewRealm, opts ...Option) *reports.Run {
	tb.Helper()
	return run(tb, newRealm, opts...)
}

// ReproLine is the line a failure ends with (settings.ReproLine).
func ReproLine(r Repro) string { return settings.ReproLine(r) }

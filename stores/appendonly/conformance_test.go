package appendonly_test

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"
	"github.com/conform-spi/conform/stores/appendonly"
)

// TestConformance certifies the store with every chapter: conformant, and
// every row exercised (the in-store failpoints are in place).
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	var run *reports.Run
	harness.Run(t, func(ctx context.Context) (hoststore.HostStoreFactory, error) {
		return appendonly.NewRealm(ctx, dir)
	}, harness.WithStore("appendonly"), harness.WithReportDir(t.TempDir()), harness.WithResult(&run))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Rows {
		if row.Status != reports.StatusPassed || len(row.NotExercised) > 0 {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

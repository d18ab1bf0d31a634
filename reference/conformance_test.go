package reference_test

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// TestConformance runs the whole host store chapter over the reference
// store: it must be conformant with every row exercised.
func TestConformance(t *testing.T) {
	run := harness.Run(t, func(ctx context.Context) (hoststore.HostStoreFactory, error) {
		return reference.NewFactory(), nil
	}, harness.WithStore("reference:"), harness.WithReportDir(t.TempDir()))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

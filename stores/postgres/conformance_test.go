package postgres_test

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/postgres"
)

// TestConformance certifies the store with every chapter, each over a
// fresh realm: conformant, and every row exercised (the in-store
// failpoints are in place).
func TestConformance(t *testing.T) {
	url := serverURL(t)
	var realms []*postgres.Factory
	t.Cleanup(func() {
		for _, f := range realms {
			if err := f.Close(); err != nil {
				t.Errorf("Close(%s): %v", f.Realm(), err)
			}
		}
	})
	run := harness.Run(t, func(ctx context.Context) (hoststore.HostStoreFactory, error) {
		f, err := postgres.NewRealm(ctx, url)
		if err == nil {
			realms = append(realms, f)
		}
		return f, err
	}, harness.WithStore("postgres"), harness.WithReportDir(t.TempDir()))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

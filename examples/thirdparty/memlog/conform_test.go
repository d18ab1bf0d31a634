package memlog_test

import (
	"context"
	"os"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"

	"example.com/thirdparty/memlog"
)

// TestConform certifies memlog with conform's host store chapter: the store
// must be conformant, with every row passed and nothing left unexercised.
// The reports go to a temporary directory, or to $CONFORM_REPORT_DIR when
// it is set (as in CI, which keeps them). One harness.Run per test binary.
func TestConform(t *testing.T) {
	dir := os.Getenv(harness.EnvReportDir)
	if dir == "" {
		dir = t.TempDir()
	}
	var run *reports.Run
	harness.Run(t, func(context.Context) (hoststore.HostStoreFactory, error) {
		return memlog.NewFactory(), nil
	}, harness.WithStore("memlog"), harness.WithReportDir(dir), harness.WithResult(&run))
	if run == nil || !run.Conformant() {
		t.Fatalf("memlog is not conformant; see the reports in %s", dir)
	}
	for _, row := range run.Rows {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

package memlog_test

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"

	"example.com/thirdparty/memlog"
)

// TestConform certifies memlog with conform's chapters: the run's verdict
// must be certified, every row passed with nothing left not exercised. The
// reports go to a temporary directory; $CONFORM_REPORT_DIR, when set (as in
// CI, which keeps them), ranks above that, as every CONFORM_* variable
// ranks above the code's options. One harness.Run per test binary.
func TestConform(t *testing.T) {
	run := harness.Run(t, func(context.Context) (hoststore.HostStoreFactory, error) {
		return memlog.NewFactory(), nil
	}, harness.WithStore("memlog"), harness.WithReportDir(t.TempDir()))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	if v := run.Verdict(); v != reports.VerdictConformant {
		t.Errorf("verdict %s, want %s", v, reports.VerdictConformant)
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

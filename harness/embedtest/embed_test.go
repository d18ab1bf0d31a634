// Package embedtest shows, and tests, conform's chapters embedded in a
// store author's own Ginkgo suite with harness.Register.
package embedtest_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/reportdir"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

var (
	reportDir = mustTempDir()
	run       *reports.Run
	ownRan    bool
)

func mustTempDir() string {
	d, err := os.MkdirTemp("", "conform-embed")
	if err != nil {
		panic(err)
	}
	return d
}

// The store author's own spec, beside conform's chapters in one suite.
var _ = Describe("my store's own spec", func() {
	It("runs in the same suite as the chapters", func() { ownRan = true })
})

var _ = harness.Register(func(context.Context) (hoststore.HostStoreFactory, error) {
	return reference.NewFactory(), nil
}, harness.WithReportDir(reportDir), harness.WithResult(&run), harness.WithStore("reference:"))

func TestEmbedded(t *testing.T) {
	defer os.RemoveAll(reportDir)
	if !RunSpecs(t, "embedded conform") {
		t.Fatal("the suite failed")
	}
	if !ownRan {
		t.Error("the author's own spec did not run")
	}
	if run == nil {
		t.Fatal("Register's ReportAfterSuite produced no report model")
	}
	if !run.Verdict().Passing() {
		t.Error("the reference is not conformant when embedded")
	}
	if got, sel := run.Counts()[reports.StatusPassed], len(run.Selected()); got != sel || got < 10 {
		t.Errorf("%d of %d selected rows passed", got, sel)
	}
	for _, f := range reportdir.Files {
		if _, err := os.Stat(reportDir + "/" + f); err != nil {
			t.Errorf("report %s: %v", f, err)
		}
	}
}

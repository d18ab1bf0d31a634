// Package embedtest shows, and tests, conform's chapters embedded in a
// store author's own Ginkgo suite with harness.Register.
package embedtest_test

import (
	"context"
	"os"
	"path/filepath"
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
}, harness.WithReportDir(reportDir), harness.WithStore("reference:"))

func TestEmbedded(t *testing.T) {
	defer os.RemoveAll(reportDir)
	if !RunSpecs(t, "embedded conform") {
		t.Fatal("the suite failed")
	}
	if !ownRan {
		t.Error("the author's own spec did not run")
	}
	f, err := os.Open(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatalf("Register's ReportAfterSuite wrote no report.json: %v", err)
	}
	defer f.Close()
	run, err := reports.ReadJSON(f)
	if err != nil {
		t.Fatalf("report.json: %v", err)
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

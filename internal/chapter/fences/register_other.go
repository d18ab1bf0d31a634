//go:build !linux

package fences

import . "github.com/onsi/ginkgo/v2"

// rowRun is one run of a row; off Linux it only reports the row not
// exercised.
type rowRun struct{}

// rowBody returns a body that reports the row as not exercised: the rows
// need Linux (/proc, mount namespaces, flock(1)).
func rowBody(string) func(*rowRun) {
	return func(*rowRun) {
		AddReportEntry(EntryNothingExercised, "the admission chapter runs on Linux only", ReportEntryVisibilityNever)
		Skip("not exercised: the admission chapter runs on Linux only")
	}
}

// ServeHelperIfRequested returns at once: there is no helper off Linux.
func ServeHelperIfRequested() {}

func newRowRun(*Config, SpecContext, RowSpec) *rowRun { return &rowRun{} }

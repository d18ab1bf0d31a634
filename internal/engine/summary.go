package engine

import (
	"fmt"

	"github.com/conform-spi/conform/reports"
)

// passedInPart returns how many selected rows passed what ran but left
// parts not exercised: Counts counts them as passed, and they do not
// certify (Row.Certified).
func passedInPart(run *reports.Run) int {
	n := 0
	for _, row := range run.Selected() {
		if row.Status == reports.StatusPassed && !row.Certified() {
			n++
		}
	}
	return n
}

// inPartNote returns " (n of them in part)" for n rows passed in part, or
// "" for none, as the reports put it after the count of rows passed.
func inPartNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them in part)", n)
}

// notSelected returns how many rows the label filter left out.
func notSelected(run *reports.Run) int { return len(run.Rows) - len(run.Selected()) }

package reports_test

import (
	"fmt"

	"github.com/conform-spi/conform/reports"
)

// A store's own certification test asks the run for its verdict and names
// every row that is not certified.
func ExampleRun_Verdict() {
	run := &reports.Run{Rows: []reports.Row{
		{ID: "kill", Status: reports.StatusPassed},
		{ID: "takeover", Status: reports.StatusPassed, NotExercised: []string{"hold a commit in flight: no in-store failpoints"}},
	}}
	fmt.Println(run.Verdict())
	for _, row := range run.Rows {
		if !row.Certified() {
			fmt.Printf("row %s: %s, not exercised: %v\n", row.ID, row.Status, row.NotExercised)
		}
	}
	// Output:
	// not-conformant
	// row takeover: passed, not exercised: [hold a commit in flight: no in-store failpoints]
}

func ExampleRow_Certified() {
	fmt.Println(reports.Row{Status: reports.StatusPassed}.Certified())
	fmt.Println(reports.Row{Status: reports.StatusNotExercised, NotExercised: []string{"no failpoints"}}.Certified())
	// Output:
	// true
	// false
}

package reports

import "testing"

func TestSummaryCountsTheSelectedRows(t *testing.T) {
	run := &Run{Rows: []Row{
		{ID: "a", Status: StatusPassed},
		{ID: "b", Status: StatusPassed, NotExercised: []string{"a part"}},
		{ID: "c", Status: StatusFailed},
		{ID: "d", Status: StatusNotRun},
		{ID: "e", Status: StatusNotRun, NotSelected: true},
	}}
	want := "2 rows passed (1 of them in part), 1 failed, 0 not exercised, 1 not run, 1 not selected"
	if got := run.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	run.Rows = run.Rows[:1]
	if got, want := run.Summary(), "1 rows passed, 0 failed, 0 not exercised, 0 not run"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

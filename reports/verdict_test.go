package reports

import "testing"

func TestRowCertified(t *testing.T) {
	cases := []struct {
		name string
		row  Row
		want bool
	}{
		{"passed, all exercised", Row{Status: StatusPassed}, true},
		{"passed, part not exercised", Row{Status: StatusPassed, NotExercised: []string{"hold: no failpoints"}}, false},
		{"failed", Row{Status: StatusFailed}, false},
		{"not exercised", Row{Status: StatusNotExercised, NotExercised: []string{"x"}}, false},
		{"not run", Row{Status: StatusNotRun}, false},
		{"unknown status", Row{Status: "weird"}, false},
		{"no status", Row{}, false},
	}
	for _, c := range cases {
		if got := c.row.Certified(); got != c.want {
			t.Errorf("%s: Certified() = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRunVerdict(t *testing.T) {
	partial := passingRun()
	partial.Rows[1].NotExercised = []string{"hold: no failpoints"}
	interruptedFailing := sampleRun()
	interruptedFailing.Interrupted = true
	interruptedPassing := passingRun()
	interruptedPassing.Interrupted = true
	notRun := passingRun()
	notRun.Rows[0].Status = StatusNotRun
	unknown := passingRun()
	unknown.Rows[0].Status = "weird"
	cases := []struct {
		name string
		run  *Run
		want Verdict
	}{
		{"every row passed, all exercised", passingRun(), VerdictCertified},
		{"no rows", &Run{}, VerdictCertified},
		{"a passed row partly not exercised", partial, VerdictIncomplete},
		{"a row not run", notRun, VerdictIncomplete},
		{"failed rows", sampleRun(), VerdictNotConformant},
		{"an unknown status", unknown, VerdictNotConformant},
		{"interrupted with failed rows", interruptedFailing, VerdictInterrupted},
		{"interrupted, rows passed", interruptedPassing, VerdictInterrupted},
	}
	for _, c := range cases {
		got := c.run.Verdict()
		if got != c.want {
			t.Errorf("%s: Verdict() = %q, want %q", c.name, got, c.want)
		}
		// The verdict and Conformant never disagree.
		conformant := got == VerdictCertified || got == VerdictIncomplete
		if conformant != c.run.Conformant() {
			t.Errorf("%s: Verdict() = %q but Conformant() = %v", c.name, got, c.run.Conformant())
		}
	}
}

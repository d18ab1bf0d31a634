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
	noSites := passingRun()
	noSites.Rows[1].NotExercised = []string{"hold: the store never reached commit-locked"}
	noSites.Rows[1].InStoreOnly = true
	declared := noSites.clone()
	declared.WithoutInStoreFaults = true
	declaredWhole := declared.clone()
	declaredWhole.Rows[1].Status = StatusNotExercised
	declaredOther := declared.clone()
	declaredOther.Rows[0].NotExercised = []string{"a page of exactly the rows left: the scope had none"}
	interruptedFailing := sampleRun()
	interruptedFailing.Interrupted = true
	interruptedPassing := passingRun()
	interruptedPassing.Interrupted = true
	notRun := passingRun()
	notRun.Rows[0].Status = StatusNotRun
	unknown := passingRun()
	unknown.Rows[0].Status = "weird"
	filtered := passingRun()
	filtered.Rows[0].Status, filtered.Rows[0].NotSelected = StatusNotRun, true
	none := passingRun()
	for i := range none.Rows {
		none.Rows[i].Status, none.Rows[i].NotSelected = StatusNotRun, true
	}
	cases := []struct {
		name string
		run  *Run
		want Verdict
	}{
		{"every row passed, all exercised", passingRun(), VerdictConformant},
		{"rows left out by the selection", filtered, VerdictConformant},
		{"no rows", &Run{}, VerdictEmpty},
		{"no row selected", none, VerdictEmpty},
		{"a passed row partly not exercised", partial, VerdictNotConformant},
		{"no in-store sites, undeclared", noSites, VerdictNotConformant},
		{"no in-store sites, declared", declared, VerdictConformantWithoutInStore},
		{"no in-store sites, declared, a row wholly not exercised", declaredWhole, VerdictConformantWithoutInStore},
		{"declared, but a gap of another kind", declaredOther, VerdictNotConformant},
		{"a selected row not run", notRun, VerdictNotConformant},
		{"failed rows", sampleRun(), VerdictNotConformant},
		{"an unknown status", unknown, VerdictNotConformant},
		{"interrupted with failed rows", interruptedFailing, VerdictInterrupted},
		{"interrupted, rows passed", interruptedPassing, VerdictInterrupted},
	}
	for _, c := range cases {
		got := c.run.Verdict()
		if got != c.want {
			t.Errorf("%s: Verdict() = %q, want %q (reasons %q)", c.name, got, c.want, c.run.Reasons())
		}
		if got.Passing() != c.run.conformant() {
			t.Errorf("%s: Verdict() = %q but Conformant() = %v", c.name, got, c.run.conformant())
		}
		if why := c.run.Reasons(); (got == VerdictConformant) != (len(why) == 0) {
			t.Errorf("%s: verdict %q with reasons %q", c.name, got, why)
		}
	}
}

// clone copies a run deeply enough for a test to change its rows.
func (r *Run) clone() *Run {
	c := *r
	c.Rows = append([]Row(nil), r.Rows...)
	return &c
}

package reports

import (
	"fmt"
	"strings"
)

// Verdict is what a whole run says about the store.
type Verdict string

// The verdicts Run.Verdict returns. Only the first two pass.
const (
	// VerdictConformant: every selected row passed with everything it
	// checks exercised.
	VerdictConformant Verdict = "conformant"
	// VerdictConformantWithoutInStore: as VerdictConformant, except for
	// parts that need the in-store sites, which the store never reached
	// and its author declared it does not call (Run.WithoutInStoreFaults).
	VerdictConformantWithoutInStore Verdict = "conformant-without-instore-faults"
	// VerdictNotConformant: a selected row failed, has a status outside the
	// four known ones, or left something it checks not exercised or not
	// run. What was not shown is not passed.
	VerdictNotConformant Verdict = "not-conformant"
	// VerdictInterrupted: the run did not reach its end; it gives no verdict
	// on the store.
	VerdictInterrupted Verdict = "interrupted"
	// VerdictEmpty: the selection held no row; an empty run is no verdict.
	VerdictEmpty Verdict = "empty"
)

// known reports whether v is one of the verdicts above.
func (v Verdict) known() bool {
	switch v {
	case VerdictConformant, VerdictConformantWithoutInStore, VerdictNotConformant, VerdictInterrupted, VerdictEmpty:
		return true
	}
	return false
}

// Passing reports whether v certifies the store (exit code 0).
func (v Verdict) Passing() bool {
	return v == VerdictConformant || v == VerdictConformantWithoutInStore
}

// Label returns the verdict in words, as every report and the console
// show it.
func (v Verdict) Label() string {
	switch v {
	case VerdictConformant:
		return "conformant"
	case VerdictConformantWithoutInStore:
		return "conformant without in-store faults"
	case VerdictNotConformant:
		return "not conformant"
	case VerdictInterrupted:
		return "interrupted, no verdict"
	case VerdictEmpty:
		return "empty selection, no verdict"
	}
	return "unknown verdict " + string(v)
}

// symbol returns a one-character mark for the verdict: ✓ for a passing
// verdict, ✗ for not conformant, – for no verdict.
func (v Verdict) symbol() string {
	switch {
	case v.Passing():
		return "✓"
	case v == VerdictNotConformant:
		return "✗"
	}
	return "–"
}

// Certified reports whether the row certifies what it checks: it passed,
// and no part of it was left not exercised. This is the one place that
// says what certifies a row; every caller asks it rather than comparing
// the status itself.
func (r Row) Certified() bool {
	return r.Status == StatusPassed && len(r.NotExercised) == 0
}

// certifiedWithout reports whether the row certifies what it checks once
// the in-store sites are declared absent: it passed, or could reach
// nothing, and every part it left not exercised needs those sites.
func (r Row) certifiedWithout() bool {
	return (r.Status == StatusPassed || r.Status == StatusNotExercised) && r.InStoreOnly && len(r.NotExercised) > 0
}

// Verdict returns the run's verdict, from the selected rows only.
func (r *Run) Verdict() Verdict {
	v, _ := r.judge()
	return v
}

// Reasons returns why the run's verdict is not VerdictConformant, one line
// each: the rows that failed, were not exercised in part or in whole, or
// did not run; nil for a conformant run.
func (r *Run) Reasons() []string {
	_, why := r.judge()
	return why
}

// conformant reports whether the verdict passes (Verdict().Passing()).
func (r *Run) conformant() bool { return r.Verdict().Passing() }

// Selected returns the rows the run's selection held.
func (r *Run) Selected() []Row {
	var out []Row
	for _, row := range r.Rows {
		if !row.NotSelected {
			out = append(out, row)
		}
	}
	return out
}

func (r *Run) judge() (Verdict, []string) {
	if r.Interrupted {
		return VerdictInterrupted, []string{"the run was interrupted before its end: rows not run did not run"}
	}
	rows := r.Selected()
	if len(rows) == 0 {
		return VerdictEmpty, []string{"the selection holds no row: nothing was run, so nothing is shown"}
	}
	var why []string
	failed, declared := false, false
	for _, row := range rows {
		switch {
		case row.Certified():
		case row.Status == StatusFailed:
			failed = true
			why = append(why, fmt.Sprintf("row %s failed (%s)", row.ID, failedObligations(row)))
		case !row.Status.known():
			failed = true
			why = append(why, fmt.Sprintf("row %s has the unknown status %q", row.ID, row.Status))
		case r.WithoutInStoreFaults && row.certifiedWithout():
			declared = true
			why = append(why, fmt.Sprintf("row %s: not exercised, as declared (no in-store sites): %s", row.ID, strings.Join(row.NotExercised, "; ")))
		case row.Status == StatusNotRun:
			failed = true
			why = append(why, fmt.Sprintf("row %s did not run%s", row.ID, because(row.NotExercised)))
		case row.InStoreOnly:
			failed = true
			why = append(why, fmt.Sprintf("row %s: not exercised, since the store never reached an in-store site (a store that has none declares it: harness.WithoutInStoreFaults, --without-instore-faults): %s", row.ID, strings.Join(row.NotExercised, "; ")))
		default:
			failed = true
			why = append(why, fmt.Sprintf("row %s: not exercised: %s", row.ID, strings.Join(row.NotExercised, "; ")))
		}
	}
	switch {
	case failed:
		return VerdictNotConformant, why
	case declared:
		return VerdictConformantWithoutInStore, why
	}
	return VerdictConformant, nil
}

func failedObligations(row Row) string {
	seen := map[ObligationID]bool{}
	var obs []string
	for _, f := range row.Failures {
		if !seen[f.Obligation] {
			seen[f.Obligation] = true
			obs = append(obs, string(f.Obligation))
		}
	}
	if len(obs) == 0 {
		return "no obligation named"
	}
	return strings.Join(obs, ", ")
}

func because(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

package reports

// Verdict is what a whole run says about the store, from strongest to
// weakest claim: certified, incomplete, not conformant, interrupted.
type Verdict string

// The verdicts Run.Verdict returns.
const (
	// VerdictCertified: the run was not interrupted and every row is
	// certified (Row.Certified): passed, with nothing left not exercised.
	VerdictCertified Verdict = "certified"
	// VerdictIncomplete: no row failed (Run.Conformant returns true), but at
	// least one row is not certified: it was not exercised, in whole or in
	// part, or it did not run. Nothing certifies such a store.
	VerdictIncomplete Verdict = "incomplete"
	// VerdictNotConformant: a row failed, or has a status outside the four
	// known ones.
	VerdictNotConformant Verdict = "not-conformant"
	// VerdictInterrupted: the run did not reach its end; it gives no verdict
	// on the store.
	VerdictInterrupted Verdict = "interrupted"
)

// Certified reports whether the row certifies what it checks: it passed,
// and no part of it was left not exercised. This is the one place that
// says what certifies a row; every caller asks it rather than comparing
// the status itself.
func (r Row) Certified() bool {
	return r.Status == StatusPassed && len(r.NotExercised) == 0
}

// Verdict returns the run's verdict. It is VerdictCertified only when
// every row is certified; a run with no rows is certified vacuously, so a
// caller that expects rows checks their number too.
func (r *Run) Verdict() Verdict {
	switch {
	case r.Interrupted:
		return VerdictInterrupted
	case !r.Conformant():
		return VerdictNotConformant
	}
	for _, row := range r.Rows {
		if !row.Certified() {
			return VerdictIncomplete
		}
	}
	return VerdictCertified
}

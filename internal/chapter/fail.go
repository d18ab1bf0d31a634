package chapter

import (
	"fmt"
	"io"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// Fail fails the running spec for a breach of obligation ob: what broke,
// what the reference expected and what the store showed. The failure also
// carries the spec's trail and the row's repro string.
func (e *Env) Fail(ob reports.ObligationID, message, expected, got string) {
	spec.Helper()
	e.FailDiff(ob, message, expected, got, "")
}

// FailDiff is Fail with a diff of structures (heads, rows, listings).
//
// When one of the spec's store calls hung or answered Unavailable, the
// store is probed first (outage): a store that became unavailable makes
// the spec not run instead, unless a hang came first.
func (e *Env) FailDiff(ob reports.ObligationID, message, expected, got, diff string) {
	spec.Helper()
	down := e.outage()
	f := reports.Failure{
		Message:    message,
		Obligation: ob,
		Expected:   expected,
		Got:        got,
		Diff:       diff,
		Trail:      e.trailLines(),
	}
	if br := e.FirstBreach(); br != nil {
		f.Obligation = ObErrors
		f.Message = fmt.Sprintf("the store broke the error contract (%s in %s: %s); then: %s", br.Kind, br.Op, textsafe.Clip(br.Detail, 500), message)
	}
	f.Message += down
	e.Spec().AddFailure(f)
	spec.Fail(e.failureText(f))
}

// Failf is Fail without a separate expected/got.
func (e *Env) Failf(ob reports.ObligationID, format string, args ...any) {
	spec.Helper()
	e.FailDiff(ob, fmt.Sprintf(format, args...), "", "", "")
}

func (e *Env) failureText(f reports.Failure) string {
	var sb strings.Builder
	title := string(f.Obligation)
	rule, doc := "", ""
	if o, ok := Obligations.ByID(f.Obligation); ok {
		title = string(o.ID) + " " + o.Title
		rule, doc = o.Statement, o.Doc
	}
	fmt.Fprintf(&sb, "[%s] %s\n", title, f.Message)
	if rule != "" {
		fmt.Fprintf(&sb, "  the rule: %s (%s)\n", rule, doc)
	}
	writeBlock(&sb, "expected", f.Expected)
	writeBlock(&sb, "got", f.Got)
	writeBlock(&sb, "diff", f.Diff)
	if len(f.Trail) > 0 {
		sb.WriteString("  trail:\n")
		trail := f.Trail
		if len(trail) > 40 {
			fmt.Fprintf(&sb, "    (%d earlier operations in the report)\n", len(trail)-40)
			trail = trail[len(trail)-40:]
		}
		for _, l := range trail {
			sb.WriteString("    " + textsafe.Clip(l, 400) + "\n")
		}
	}
	fmt.Fprintf(&sb, "  repro: %s\n", e.Cfg.Settings.Repro(e.rowID))
	return sb.String()
}

func writeBlock(w io.Writer, name, text string) {
	if text == "" {
		return
	}
	text = textsafe.Clip(text, 4096)
	if !strings.Contains(text, "\n") {
		fmt.Fprintf(w, "  %s: %s\n", name, text)
		return
	}
	fmt.Fprintf(w, "  %s:\n", name)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// NotExercised records that part of the running spec could not be reached,
// and why. The row goes on with what it can check.
func (e *Env) NotExercised(part, why string) {
	e.Tracef("not exercised: %s (%s)", part, why)
	e.Spec().NotExercised(part + ": " + why)
}

// NotExercisedInStore is NotExercised for a part that needs an in-store
// site the store never reached.
func (e *Env) NotExercisedInStore(part, why string) {
	e.Spec().InStoreGap()
	e.NotExercised(part, why)
}

// NothingExercisedInStore is NothingExercised for a spec that needs an
// in-store site the store never reached.
func (e *Env) NothingExercisedInStore(why string) {
	spec.Helper()
	e.Spec().InStoreGap()
	e.NothingExercised(why)
}

// NothingExercised ends the running spec as not exercised: it could reach
// none of what it checks. It never counts as passed.
func (e *Env) NothingExercised(why string) {
	spec.Helper()
	e.Spec().NothingExercised(why)
}

//go:build linux

package fences

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/conform-spi/conform/internal/spec"
	"github.com/conform-spi/conform/reports"
)

// rowRun is one run of a row: its config, its context, and the trail of
// what it did, which every failure carries.
type rowRun struct {
	c     *Config
	ctx   context.Context
	sp    *spec.Spec
	spec  RowSpec
	trail []string
}

// failure is one failure of a row; the spec records it as a
// reports.Failure.
type failure struct {
	Message    string   `json:"message"`
	Obligation string   `json:"obligation"`
	Expected   string   `json:"expected,omitempty"`
	Got        string   `json:"got,omitempty"`
	Trail      []string `json:"trail,omitempty"`
}

// maxTrail is how many of the latest trail lines a failure carries.
const maxTrail = 60

// note adds a line to the row's trail.
func (r *rowRun) note(format string, args ...any) {
	r.trail = append(r.trail, fmt.Sprintf(format, args...))
}

// fail fails the row for a breach of obligation ob, and records the failure
// on the spec. Every assertion of a row ends here.
func (r *rowRun) fail(ob, message, expected, got string) {
	spec.Helper()
	trail := r.trail
	if len(trail) > maxTrail {
		trail = trail[len(trail)-maxTrail:]
	}
	if !slices.Contains(r.spec.Obligations, ob) {
		message += " (a chapter bug: row " + r.spec.ID + " does not list " + ob + ")"
	}
	f := failure{Message: message, Obligation: ob, Expected: expected, Got: got, Trail: trail}
	r.sp.AddFailure(reports.Failure{Message: f.Message, Obligation: reports.ObligationID(f.Obligation), Expected: f.Expected, Got: f.Got, Trail: f.Trail})
	spec.Fail(r.failureText(f))
}

func (r *rowRun) failureText(f failure) string {
	var sb strings.Builder
	title := f.Obligation
	if o, ok := ObligationByID(f.Obligation); ok {
		title += " " + o.Title
	}
	fmt.Fprintf(&sb, "[%s] %s\n", f.Obligation, f.Message)
	fmt.Fprintf(&sb, "  obligation: %s\n", title)
	if f.Expected != "" || f.Got != "" {
		fmt.Fprintf(&sb, "  expected: %s\n  got: %s\n", f.Expected, f.Got)
	}
	if len(f.Trail) > 0 {
		sb.WriteString("  trail:\n")
		for _, l := range f.Trail {
			sb.WriteString("    " + l + "\n")
		}
	}
	if r.c.Repro != nil {
		fmt.Fprintf(&sb, "  repro: %s\n", r.c.Repro(r.spec.ID))
	}
	return sb.String()
}

// check fails the row for ob unless ok.
func (r *rowRun) check(ob string, ok bool, message string, expected, got any) {
	spec.Helper()
	if !ok {
		r.fail(ob, message, fmt.Sprint(expected), fmt.Sprint(got))
	}
}

// equal fails the row for ob unless got equals want.
func (r *rowRun) equal(ob string, got, want any, message string) {
	spec.Helper()
	r.check(ob, fmt.Sprint(got) == fmt.Sprint(want), message, want, got)
}

// setup fails the row, naming no obligation, for something the chapter
// could not arrange; the implementation broke nothing yet.
func (r *rowRun) setup(err error, format string, args ...any) {
	spec.Helper()
	if err != nil {
		spec.Fail(fmt.Sprintf("[setup] "+format+": %v", append(args, err)...))
	}
}

// notExercised ends the row as not exercised, saying why.
func (r *rowRun) notExercised(why string) {
	spec.Helper()
	r.sp.NothingExercised(why)
}

// needRoot ends the row as not exercised when the chapter does not run as
// root.
func (r *rowRun) needRoot(why string) {
	spec.Helper()
	if os.Geteuid() != 0 {
		r.notExercised(why + " needs root (CI runs as root)")
	}
}

func newRowRun(c *Config, ctx context.Context, spec RowSpec) *rowRun {
	return &rowRun{c: c, ctx: ctx, sp: specOf(ctx), spec: spec}
}

// rowBody returns the body of the row with the given ID.
func rowBody(id string) func(*rowRun) {
	body, ok := rowBodies[id]
	if !ok {
		return func(*rowRun) { spec.Fail("[setup] the chapter has no body for row " + id) }
	}
	return body
}

// rowBodies are the rows' bodies by row ID.
var rowBodies = map[string]func(*rowRun){
	"exclusive-shared":    rowExclusiveShared,
	"shared-shared":       rowSharedShared,
	"exclusive-exclusive": rowExclusiveExclusive,
	"try":                 rowTry,
	"bound":               rowBound,
	"sigkill":             rowSigkill,
	"cloexec":             rowCloexec,
	"order-taken":         rowOrderTaken,
	"order-refused":       rowOrderRefused,
	"realm-ids":           rowRealmIDs,
	"mode":                rowMode,
	"group":               rowGroup,
	"file-kinds":          rowFileKinds,
	"existing-mode":       rowExistingMode,
	"existing-group":      rowExistingGroup,
	"denied":              rowDenied,
	"removed":             rowRemoved,
	"composed":            rowComposed,
	"filesystem":          rowFilesystem,
	"flock-shared":        rowFlockShared,
	"flock-exclusive":     rowFlockExclusive,
	"flock-excluded":      rowFlockExcluded,
}

// Package reports turns the results of a conformance run into the four files
// a run leaves behind, passing or failing: junit.xml for CI systems,
// report.json (a versioned schema that ReadJSON reads back), report.md for a
// CI step summary or a pull-request comment, and report.html, one
// self-contained page that shows the whole certification at a glance.
//
// The harness fills a Run; WriteAll writes the four files atomically. Every
// writer treats the text in a Run as untrusted: it comes from the store under
// test (payloads, error details, logs). The Markdown and HTML writers escape
// it for their format, make control characters visible and cut each field to
// a bounded length, so a hostile or broken store cannot inject markup, corrupt
// a terminal or blow up a report.
package reports

import (
	"fmt"
	"time"

	"github.com/conform-spi/conform/internal/timeline"
)

// SchemaVersion is the version of the report.json schema that WriteAll
// writes and the only one ReadJSON accepts. It changes when a field changes
// meaning or is removed; adding a field does not change it. Schema 2 judges
// only the selected rows, counts what was not exercised against the store,
// and writes the verdict and its reasons.
const SchemaVersion = 2

// Status is the verdict of one row.
type Status string

// The statuses a row can have. Following the design's rule that "what a store
// does not support is reported as not exercised, never as passed", a row that
// could reach none of what it checks is StatusNotExercised, not StatusPassed.
const (
	// StatusPassed: everything the row checks was exercised and held.
	StatusPassed Status = "passed"
	// StatusFailed: at least one check of the row did not hold.
	StatusFailed Status = "failed"
	// StatusNotExercised: the row ran but could reach none of what it checks.
	StatusNotExercised Status = "not-exercised"
	// StatusNotRun: the row was interrupted, filtered out, or skipped because
	// the realm could not serve it.
	StatusNotRun Status = "not-run"
)

// statuses lists the known statuses in the order the reports show them.
var statuses = []Status{StatusPassed, StatusFailed, StatusNotExercised, StatusNotRun}

// known reports whether s is one of the four statuses above.
func (s Status) known() bool {
	switch s {
	case StatusPassed, StatusFailed, StatusNotExercised, StatusNotRun:
		return true
	}
	return false
}

// label is the status in words for people ("not exercised"); an unknown
// status is shown as its raw value.
func (s Status) label() string {
	switch s {
	case StatusNotExercised:
		return "not exercised"
	case StatusNotRun:
		return "not run"
	case "":
		return "unknown"
	}
	return string(s)
}

// symbol is a one-character text mark for the status, so that no report
// tells statuses apart by colour alone: ✓ passed, ✗ failed, ◌ not exercised,
// – not run, ? anything else.
func (s Status) symbol() string {
	switch s {
	case StatusPassed:
		return "✓"
	case StatusFailed:
		return "✗"
	case StatusNotExercised:
		return "◌"
	case StatusNotRun:
		return "–"
	}
	return "?"
}

// Obligation is one entry of the catalogue: a column of the report's matrix.
type Obligation struct {
	ID    ObligationID `json:"id"`    // "ob:1".."ob:9", "ob:fence" (fence leases), "ob:errors" (error contract)
	Title string       `json:"title"` // "All or nothing"
	// Statement is the rule in one or two sentences, in conform's words.
	Statement string `json:"statement"`
	// Doc is where the rule is explained, relative to conform's module
	// ("docs/host-store-contract.md#ob-1").
	Doc string `json:"doc,omitempty"`
}

// Failure is one check of a row that did not hold. A row run with
// ContinueOnFailure may record several.
type Failure struct {
	Message    string       `json:"message"`    // one paragraph: what broke
	Obligation ObligationID `json:"obligation"` // ID of the obligation broken
	Expected   string       `json:"expected,omitempty"`
	Got        string       `json:"got,omitempty"`
	Diff       string       `json:"diff,omitempty"`
	Trail      []string     `json:"trail,omitempty"` // the operations that led there, one line each
	Location   string       `json:"location,omitempty"`
	// Timeline is the concurrent history the failure was found in, when
	// exploration found it, with the operation it is about highlighted.
	Timeline *timeline.Timeline `json:"timeline,omitempty"`
}

// Row is the result of one row (one Ginkgo It) of a chapter.
type Row struct {
	Chapter      ChapterID      `json:"chapter"`     // "host-store"
	ID           RowID          `json:"id"`          // "stale-fence"
	Name         string         `json:"name"`        // "Stale fence"
	Spec         string         `json:"spec"`        // full spec text of the row/It
	Labels       []string       `json:"labels"`      // Ginkgo labels that select the row
	Obligations  []ObligationID `json:"obligations"` // IDs this row checks
	Status       Status         `json:"status"`
	Duration     time.Duration  `json:"duration_ns"`
	NotExercised []string       `json:"not_exercised,omitempty"` // parts of the row that could not be reached, each with why
	// InStoreOnly: every part in NotExercised needs the in-store sites,
	// which the store never reached.
	InStoreOnly bool `json:"instore_only,omitempty"`
	// NotSelected: the run's selection (its label filter) left the row out.
	// Such a row has status not run and counts for no verdict.
	NotSelected bool      `json:"not_selected,omitempty"`
	Failures    []Failure `json:"failures,omitempty"` // ContinueOnFailure: a row may record several
	Repro       string    `json:"repro,omitempty"`    // the command that runs the row again
	Output      string    `json:"output,omitempty"`   // captured log of the row (trimmed)
}

// Run is the whole result of one conformance run, as the harness fills it.
type Run struct {
	Schema      int           `json:"schema"`  // SchemaVersion; WriteAll fills it when zero
	Tool        string        `json:"tool"`    // "conform"
	Version     string        `json:"version"` // version of conform
	Store       string        `json:"store"`   // store URL or name
	Seed        uint64        `json:"seed"`
	Start       time.Time     `json:"start"`
	Duration    time.Duration `json:"duration_ns"`
	Failpoints  []string      `json:"failpoints,omitempty"` // name=terms
	LabelFilter string        `json:"label_filter,omitempty"`
	Interrupted bool          `json:"interrupted,omitempty"`
	// WithoutInStoreFaults: the store's author declared that the store
	// calls no in-store site (harness.WithoutInStoreFaults).
	WithoutInStoreFaults bool `json:"without_instore_faults,omitempty"`
	// Warnings are what went wrong outside any row (a realm that could not
	// be removed); they change no verdict.
	Warnings []string `json:"warnings,omitempty"`
	// Shard is the part of a sharded campaign this run did; nil for an
	// unsharded run (and a merge of shards).
	Shard *Shard `json:"shard,omitempty"`
	// MergedFrom counts the shards a merged report was made from; 0 for
	// the report of one run.
	MergedFrom int `json:"merged_from,omitempty"`
	// Explore is what the exploration chapter played and reached; nil
	// when the chapter did not run.
	Explore     *Exploration `json:"explore,omitempty"`
	Obligations []Obligation `json:"obligations"` // the catalogue: columns of the matrix
	Rows        []Row        `json:"rows"`
}

// Counts returns how many selected rows have each status (rows the label
// filter left out are not counted). The four known statuses are always
// present, zero or not; an unknown status gets its own key.
func (r *Run) Counts() map[Status]int {
	c := make(map[Status]int, len(statuses))
	for _, s := range statuses {
		c[s] = 0
	}
	for _, row := range r.Rows {
		if !row.NotSelected {
			c[row.Status]++
		}
	}
	return c
}

// passedInPart returns how many of the selected rows Counts counts as
// passed left parts not exercised: they passed what ran, and do not
// certify (Row.Certified).
func (r *Run) passedInPart() int {
	n := 0
	for _, row := range r.Selected() {
		if row.Status == StatusPassed && !row.Certified() {
			n++
		}
	}
	return n
}

// inPartNote returns " (n of them in part)" for n rows passed in part, or
// "" for none: the summaries put it after the count of rows passed.
func inPartNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them in part)", n)
}

// Summary returns the counts of the selected rows as one clause: "12 rows
// passed (1 of them in part), 0 failed, 1 not exercised, 0 not run", then
// ", N not selected" when the label filter left rows out. The console
// says it after the verdict; report.md and report.html count the same.
func (r *Run) Summary() string {
	c := r.Counts()
	s := fmt.Sprintf("%d rows passed%s, %d failed, %d not exercised, %d not run",
		c[StatusPassed], inPartNote(r.passedInPart()), c[StatusFailed], c[StatusNotExercised], c[StatusNotRun])
	if n := r.notSelectedCount(); n > 0 {
		s += fmt.Sprintf(", %d not selected", n)
	}
	return s
}

// notSelectedCount returns how many rows the label filter left out.
func (r *Run) notSelectedCount() int { return len(r.Rows) - len(r.Selected()) }

// obligation returns the catalogue entry with the given ID, if any.
func (r *Run) obligation(id ObligationID) (Obligation, bool) {
	for _, o := range r.Obligations {
		if o.ID == id {
			return o, true
		}
	}
	return Obligation{}, false
}

// chapters returns the chapters of the rows in the order they first appear.
func (r *Run) chapters() []ChapterID {
	var out []ChapterID
	seen := map[ChapterID]bool{}
	for _, row := range r.Rows {
		if !seen[row.Chapter] {
			seen[row.Chapter] = true
			out = append(out, row.Chapter)
		}
	}
	return out
}

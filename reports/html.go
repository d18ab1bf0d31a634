package reports

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
)

//go:embed html.tmpl
var htmlSource string

// htmlPage is the page template. html/template escapes every value for the
// context it lands in; no store text is ever concatenated into markup.
var htmlPage = template.Must(template.New("report.html").Parse(htmlSource))

// The view the template renders. Every string in it from the run has been
// through field or output: cut, control characters made visible.
type (
	htmlView struct {
		Tool, Version, Store, Start, Duration, LabelFilter string
		Campaign                                           string
		Verdict, VerdictSymbol                             string
		Reasons                                            []string
		Seed                                               uint64
		Schema                                             int
		Conformant, NoVerdict, Interrupted, Detailed       bool
		Unselected                                         bool // a row the selection left out
		Failpoints                                         []string
		Counts, Legend                                     []htmlCount
		Obligations                                        []htmlColumn
		Rows                                               []htmlRow
		Findings                                           []htmlFinding
		Span                                               int // columns of the matrix
	}
	// htmlFinding is one line of the summary above the matrix: a selected
	// row that is not certified.
	htmlFinding struct {
		Href, Name, Class, Symbol, Label string
		Obligations                      []string
		Message, Repro                   string
	}
	htmlCount struct {
		Class, Symbol, Label string
		N                    int
	}
	htmlRow struct {
		Index                             int
		Anchor, MatrixAnchor              string
		Chapter, ID, Name, Spec           string
		Class, Symbol, Label, Duration    string
		ShortLabel                        string // Label cut for the matrix and the summary
		Repro, Output                     string
		Labels, NotExercised              []string
		Cells                             []htmlCell
		Failures                          []htmlFailure
		ChapterStart, Details, NoFailures bool
		NotSelected                       bool
	}
	htmlColumn struct {
		ID, Short, Title, Statement string
		InCatalogue, GroupStart     bool
	}
	htmlCell struct {
		Ob, Class, Symbol, Label, Title string
		GroupStart                      bool
	}
	htmlFailure struct {
		N, Of                                         int
		Obligation, Statement, Message, Expected, Got string
		Location                                      string
		Diff                                          []htmlLine
		// The trail, split: Early are the lines folded away, Trail the last
		// lines, which led to the failure and show open.
		Early, Trail                     []string
		TrailTotal, TrailCut, EarlyCount string
		TrailStart, TailStart            int
		Timeline                         *htmlTimeline
	}
	htmlLine struct {
		Class, Text string
	}
)

// Bounds of the page's summaries, in characters: a matrix header shows at
// most htmlShortID of an obligation's ID, the findings summary at most
// htmlShortMessage of a message; the whole text is in the page below.
// A trail shows its last htmlTrailTail lines open and folds the earlier ones.
const (
	htmlShortID      = 24
	htmlShortMessage = 240
	htmlTrailTail    = 10
	htmlWordBack     = 24 // how far back a cut looks for the end of a word, in bytes
)

// writeHTML writes run as one self-contained HTML page (inline CSS, no
// script, no external asset) that shows the whole certification at a
// glance: a header with the store, seed, version, verdict and its reasons,
// duration and counts; a summary of the findings, one line per selected row
// that is not certified (its name linking to its details, the obligations
// at stake, its first message cut short, its repro line in a code element);
// a matrix with one row per row of the run and one narrow column per
// obligation, headed by the obligation's ID (its title and statement in a
// tooltip), each cell passed, failed, not exercised, not run, or blank
// when the row does not check that obligation, marked by colour and by a
// text symbol, rows the selection left out shown dim; then each finding:
// failures first, with the obligation's statement, expected, got, the diff,
// the timeline of the history it was found in as an inline SVG picture (one
// lane per process, each operation a bar from call to return showing its
// answer, faults and kills as marks, the operation the model disagrees
// with outlined; a long one scrolls sideways in its box), the last lines
// of the trail (earlier ones folded) and the repro line in a
// code element that selects whole on a click, then the parts not exercised,
// with the row's spec, labels and log folded. The columns are the
// catalogue in order, then any obligation a row names that the catalogue
// lacks. In a failed row, the cells of the obligations its failures name
// are failed, and its other cells passed; a failure that names no
// obligation, or a failed row with no failure recorded, fails every cell
// of the row. All text from the run is rendered through html/template after
// being cut to fieldMax (logs to outputMax) with control characters made
// visible.
func writeHTML(w io.Writer, run *Run) error {
	if run == nil {
		return errors.New("reports: write html: nil run")
	}
	if err := htmlPage.Execute(w, newHTMLView(run)); err != nil {
		return fmt.Errorf("reports: write html: %w", err)
	}
	return nil
}

// newHTMLView returns the view of run.
func newHTMLView(run *Run) *htmlView {
	v := &htmlView{
		Tool:        field(nonEmpty(run.Tool, "conform")),
		Version:     field(nonEmpty(run.Version, "unknown version")),
		Store:       field(run.Store),
		Duration:    duration(run.Duration),
		LabelFilter: field(run.LabelFilter),
		Campaign:    field(run.campaign()),
		Seed:        run.Seed,
		Schema:      SchemaVersion,
		Conformant:  run.conformant(),
		NoVerdict:   run.Verdict() == VerdictInterrupted || run.Verdict() == VerdictEmpty,
		Interrupted: run.Interrupted,
		Start:       "unknown",
	}
	if !run.Start.IsZero() {
		v.Start = run.Start.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	verdict := run.Verdict()
	v.Verdict, v.VerdictSymbol = verdict.Label(), verdict.symbol()
	if !run.Interrupted {
		for _, w := range run.Reasons() {
			v.Reasons = append(v.Reasons, field(w))
		}
	}
	counts := run.Counts()
	for _, s := range statuses {
		label := s.label()
		if s == StatusPassed {
			label += inPartNote(run.passedInPart())
		}
		v.Counts = append(v.Counts, htmlCount{Class: statusClass(s), Symbol: s.symbol(), Label: label, N: counts[s]})
		v.Legend = append(v.Legend, htmlCount{Class: statusClass(s), Symbol: s.symbol(), Label: s.label()})
	}
	if n := run.notSelectedCount(); n > 0 {
		v.Counts = append(v.Counts, htmlCount{Class: "notsel", Symbol: "·", Label: "not selected", N: n})
	}
	for _, fp := range run.Failpoints {
		v.Failpoints = append(v.Failpoints, field(fp))
	}
	v.Obligations = columns(run)
	v.Span = 3 + len(v.Obligations)
	var prev ChapterID
	for i, row := range run.Rows {
		hr := htmlRowOf(run, i, row, v.Obligations)
		hr.ChapterStart = i == 0 || row.Chapter != prev
		prev = row.Chapter
		v.Detailed = v.Detailed || hr.Details
		v.Unselected = v.Unselected || row.NotSelected
		v.Rows = append(v.Rows, hr)
		if f, ok := findingOf(run, row, hr); ok {
			v.Findings = append(v.Findings, f)
		}
	}
	return v
}

// findingOf returns the summary line of row, whose view is hr, and whether
// it has one: a selected row that is not certified has one, except a row
// not run in an interrupted run, which the banner speaks for.
func findingOf(run *Run, row Row, hr htmlRow) (htmlFinding, bool) {
	if row.NotSelected || row.Certified() || (run.Interrupted && row.Status == StatusNotRun) {
		return htmlFinding{}, false
	}
	f := htmlFinding{
		Href: "#" + hr.MatrixAnchor, Name: short(nonEmpty(row.Name, row.Spec, string(row.ID), "unnamed row"), htmlShortMessage),
		Class: hr.Class, Symbol: hr.Symbol, Label: hr.ShortLabel,
		Repro: field(row.Repro),
	}
	if hr.Details {
		f.Href = "#" + hr.Anchor
	}
	seen := map[ObligationID]bool{}
	addOb := func(id ObligationID) {
		if id != "" && !seen[id] {
			seen[id] = true
			f.Obligations = append(f.Obligations, short(string(id), htmlShortID))
		}
	}
	switch {
	case len(row.Failures) > 0:
		for _, fl := range row.Failures {
			addOb(fl.Obligation)
		}
		f.Message = short(row.Failures[0].Message, htmlShortMessage)
		if len(row.Failures) > 1 {
			f.Message += " (and " + plural(len(row.Failures)-1, "more failure") + ")"
		}
	case row.Status == StatusFailed:
		f.Message = "The row failed without recording a failure."
	case len(row.NotExercised) > 0:
		f.Message = "Not exercised: " + short(row.NotExercised[0], htmlShortMessage)
		if len(row.NotExercised) > 1 {
			f.Message += " (and " + plural(len(row.NotExercised)-1, "more part") + ")"
		}
	case row.Status == StatusNotExercised:
		f.Message = "The row could reach none of what it checks."
	case row.Status == StatusNotRun:
		f.Message = "The row did not run."
	default:
		f.Message = "The row has a status outside the four known ones."
	}
	if len(f.Obligations) == 0 {
		for _, id := range row.Obligations {
			addOb(id)
		}
	}
	return f, true
}

// short returns the first line of s cut to at most n characters, an
// ellipsis marking a cut, with control characters made visible: a summary
// of a field whose whole text is elsewhere on the page.
func short(s string, n int) string {
	line, rest, more := strings.Cut(s, "\n")
	cut := more && strings.TrimSpace(rest) != ""
	if len(line) > 4*n {
		// At least n whole characters precede a character this splits.
		line, cut = line[:4*n], true
	}
	line = visible(line)
	count := 0
	for i := range line {
		if count == n {
			line, cut = line[:i], true
			// End on a word when one ends near the cut.
			if sp := strings.LastIndexByte(line, ' '); sp > 0 && sp >= len(line)-htmlWordBack {
				line = line[:sp]
			}
			break
		}
		count++
	}
	line = strings.TrimRight(line, " ")
	if cut {
		line += " …"
	}
	return line
}

// columns returns the matrix columns: the catalogue, then obligations the
// rows name that it lacks, in the order they first appear. All fields cut.
// A column whose ID has another prefix (the part before ':') than the
// column before it starts a group.
func columns(run *Run) []htmlColumn {
	var cols []htmlColumn
	seen := map[ObligationID]bool{}
	add := func(o Obligation, known bool) {
		if !seen[o.ID] {
			seen[o.ID] = true
			cols = append(cols, htmlColumn{ID: field(string(o.ID)), Short: short(string(o.ID), htmlShortID),
				Title: field(o.Title), Statement: field(o.Statement), InCatalogue: known})
		}
	}
	for _, o := range run.Obligations {
		add(o, true)
	}
	for _, row := range run.Rows {
		for _, id := range row.Obligations {
			add(Obligation{ID: id}, false)
		}
		for _, f := range row.Failures {
			if f.Obligation != "" {
				add(Obligation{ID: f.Obligation}, false)
			}
		}
	}
	for i := range cols {
		if i > 0 && prefix(cols[i].ID) != prefix(cols[i-1].ID) {
			cols[i].GroupStart = true
		}
	}
	return cols
}

// prefix returns the part of an obligation ID before its first ':'.
func prefix(id string) string {
	p, _, _ := strings.Cut(id, ":")
	return p
}

// htmlRowOf returns the view of one row; cols are the matrix columns.
func htmlRowOf(run *Run, i int, row Row, cols []htmlColumn) htmlRow {
	hr := htmlRow{
		Index:        i,
		Anchor:       "row-" + strconv.Itoa(i),
		MatrixAnchor: "matrix-row-" + strconv.Itoa(i),
		Chapter:      field(nonEmpty(string(row.Chapter), "unnamed chapter")),
		ID:           field(string(row.ID)),
		Name:         field(nonEmpty(row.Name, row.Spec, string(row.ID), "unnamed row")),
		Spec:         field(row.Spec),
		Class:        statusClass(row.Status),
		Symbol:       row.Status.symbol(),
		Label:        field(row.Status.label()),
		ShortLabel:   short(row.Status.label(), htmlShortID),
		Duration:     duration(row.Duration),
		Repro:        field(row.Repro),
		NotSelected:  row.NotSelected,
	}
	for _, l := range row.Labels {
		hr.Labels = append(hr.Labels, field(l))
	}
	for _, p := range row.NotExercised {
		hr.NotExercised = append(hr.NotExercised, field(p))
	}
	if row.Status == StatusNotExercised && len(row.NotExercised) == 0 {
		hr.NotExercised = []string{"The row could reach none of what it checks."}
	}
	if row.Status == StatusFailed || !row.Status.known() {
		hr.Output = output(row.Output)
		hr.NoFailures = row.Status == StatusFailed && len(row.Failures) == 0
	}
	for j, f := range row.Failures {
		hr.Failures = append(hr.Failures, htmlFailureOf(run, i, j, len(row.Failures), f))
	}
	hr.Details = len(hr.Failures) > 0 || len(hr.NotExercised) > 0 || hr.NoFailures || hr.Output != ""
	hr.Cells = cells(row, hr.Name, cols)
	return hr
}

// cells returns one matrix cell per column for row.
func cells(row Row, name string, cols []htmlColumn) []htmlCell {
	checked := map[string]bool{}
	for _, id := range row.Obligations {
		checked[field(string(id))] = true
	}
	failedOb := map[string]bool{}
	failAll := row.Status == StatusFailed && len(row.Failures) == 0
	for _, f := range row.Failures {
		if f.Obligation == "" {
			failAll = true
			continue
		}
		checked[field(string(f.Obligation))] = true
		failedOb[field(string(f.Obligation))] = true
	}
	out := make([]htmlCell, len(cols))
	for i, col := range cols {
		s := row.Status
		switch {
		case !checked[col.ID]:
			out[i] = htmlCell{Ob: col.ID, Class: "none", Label: "not checked", GroupStart: col.GroupStart}
			continue
		case s == StatusFailed && !failAll && !failedOb[col.ID]:
			s = StatusPassed
		}
		out[i] = htmlCell{Ob: col.ID, Class: statusClass(s), Symbol: s.symbol(), Label: s.label(), GroupStart: col.GroupStart,
			Title: name + " × " + col.ID + " " + col.Title + ": " + s.label()}
	}
	return out
}

// htmlFailureOf returns the view of the j-th of n failures of row i.
func htmlFailureOf(run *Run, i, j, n int, f Failure) htmlFailure {
	hf := htmlFailure{
		N: j + 1, Of: n,
		Obligation: obligationName(run, f.Obligation),
		Message:    field(f.Message),
		Expected:   field(f.Expected),
		Got:        field(f.Got),
		Location:   field(f.Location),
	}
	if o, ok := run.obligation(f.Obligation); ok {
		hf.Statement = field(o.Statement)
	}
	if f.Diff != "" {
		for _, line := range strings.Split(field(f.Diff), "\n") {
			hf.Diff = append(hf.Diff, htmlLine{Class: diffClass(line), Text: line})
		}
	}
	lines, dropped := trail(f.Trail)
	hf.TrailTotal = plural(len(f.Trail), "operation")
	hf.TrailStart = dropped + 1
	if dropped > 0 {
		hf.TrailCut = plural(dropped, "earlier operation")
	}
	// Fold all but the last lines, unless that would hide only a line or two.
	if len(lines) > htmlTrailTail+2 {
		k := len(lines) - htmlTrailTail
		hf.Early, lines = lines[:k], lines[k:]
		hf.EarlyCount = plural(k, "earlier operation")
	}
	hf.Trail = lines
	hf.TailStart = hf.TrailStart + len(hf.Early)
	if f.Timeline != nil {
		hf.Timeline = newHTMLTimeline(f.Timeline, "tl-"+strconv.Itoa(i)+"-"+strconv.Itoa(j))
	}
	return hf
}

// diffClass returns the class of one line of a diff, for colouring.
func diffClass(line string) string {
	switch {
	case strings.HasPrefix(line, "+"):
		return "add"
	case strings.HasPrefix(line, "-"):
		return "del"
	case strings.HasPrefix(line, "@@"):
		return "hunk"
	}
	return "ctx"
}

// statusClass returns the CSS class of a status: the status itself when
// known.
func statusClass(s Status) string {
	if s.known() {
		return string(s)
	}
	return "unknown"
}

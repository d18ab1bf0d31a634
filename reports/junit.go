package reports

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The JUnit XML shapes that CI systems read (Jenkins, GitLab, GitHub
// actions that publish test results): a testsuites root with totals, one
// testsuite per chapter, one testcase per row.
type (
	junitSuites struct {
		XMLName   xml.Name     `xml:"testsuites"`
		Name      string       `xml:"name,attr"`
		Tests     int          `xml:"tests,attr"`
		Failures  int          `xml:"failures,attr"`
		Errors    int          `xml:"errors,attr"`
		Skipped   int          `xml:"skipped,attr"`
		Time      string       `xml:"time,attr"`
		Timestamp string       `xml:"timestamp,attr,omitempty"`
		Suites    []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
		SystemOut *junitText    `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Body    string `xml:",cdata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
)

// writeJUnit writes run as JUnit XML: a testsuites root carrying the totals
// (tests, failures, errors, skipped, time), one testsuite per chapter in the
// order the rows first name it, and one testcase per row (classname the
// chapter, name the row's Spec). A failed row has one failure element whose
// message is its first failure's and whose body lists every failure with its
// expected, got, diff, timeline (one event a line), trail and location,
// then the repro line; a row not exercised or not run is skipped, with a
// message saying which and why; a row with an unknown status is an error. Each testsuite carries the run's
// seed, store, version, label filter and failpoints as properties. Store
// text is cut like the other human-facing reports and its control
// characters made visible, so the XML stays well-formed.
func writeJUnit(w io.Writer, run *Run) error {
	if run == nil {
		return errors.New("reports: write junit: nil run")
	}
	stamp := ""
	if !run.Start.IsZero() {
		stamp = run.Start.UTC().Format("2006-01-02T15:04:05")
	}
	root := junitSuites{Name: field(nonEmpty(run.Tool, "conform")), Time: seconds(run.Duration), Timestamp: stamp}
	props := junitProperties(run)
	for _, chapter := range run.chapters() {
		suite := junitSuite{Name: field(nonEmpty(string(chapter), "unnamed")), Timestamp: stamp, Properties: props}
		var total time.Duration
		for _, row := range run.Rows {
			if row.Chapter != chapter {
				continue
			}
			c := junitRow(run, row)
			suite.Tests++
			switch {
			case c.Failure != nil:
				suite.Failures++
			case c.Error != nil:
				suite.Errors++
			case c.Skipped != nil:
				suite.Skipped++
			}
			total += row.Duration
			suite.Cases = append(suite.Cases, c)
		}
		suite.Time = seconds(total)
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Errors += suite.Errors
		root.Skipped += suite.Skipped
		root.Suites = append(root.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	return nil
}

// junitProperties returns the run-wide properties every testsuite carries.
func junitProperties(run *Run) []junitProperty {
	props := []junitProperty{
		{"tool", field(run.Tool)},
		{"version", field(run.Version)},
		{"store", field(run.Store)},
		{"seed", strconv.FormatUint(run.Seed, 10)},
		{"conformant", strconv.FormatBool(run.conformant())},
		{"verdict", string(run.Verdict())},
		{"interrupted", strconv.FormatBool(run.Interrupted)},
	}
	if run.LabelFilter != "" {
		props = append(props, junitProperty{"label_filter", field(run.LabelFilter)})
	}
	for _, fp := range run.Failpoints {
		props = append(props, junitProperty{"failpoint", field(fp)})
	}
	return props
}

// junitRow turns one row into a testcase.
func junitRow(run *Run, row Row) junitCase {
	c := junitCase{
		Classname: field(nonEmpty(string(row.Chapter), "unnamed")),
		Name:      field(nonEmpty(row.Spec, row.Name, string(row.ID))),
		Time:      seconds(row.Duration),
	}
	var out []string
	declared := run.WithoutInStoreFaults && row.certifiedWithout()
	notShown := func(what string) *junitProblem {
		return &junitProblem{Message: what + ": " + reasons(row.NotExercised, "the row could reach none of what it checks") + "; what was not shown is not passed", Type: "not-exercised"}
	}
	switch {
	case row.NotSelected:
		c.Skipped = &junitSkipped{Message: "not selected by the run's label filter"}
	case row.Status == StatusFailed:
		c.Failure = junitFailure(run, row)
	case row.Status == StatusPassed && (len(row.NotExercised) == 0 || declared):
	case row.Status == StatusPassed:
		c.Failure = notShown("passed, but parts not exercised")
	case row.Status == StatusNotExercised && declared:
		c.Skipped = &junitSkipped{Message: "not exercised, as declared (the store calls no in-store site): " + reasons(row.NotExercised, "")}
	case row.Status == StatusNotExercised:
		c.Failure = notShown("not exercised")
	case row.Status == StatusNotRun && run.Interrupted:
		c.Skipped = &junitSkipped{Message: "not run: " + reasons(row.NotExercised, "the run was interrupted")}
	case row.Status == StatusNotRun:
		c.Failure = &junitProblem{Message: "not run: " + reasons(row.NotExercised, "the row was skipped"), Type: "not-run"}
	default:
		c.Error = &junitProblem{Message: "unknown row status " + strconv.Quote(field(string(row.Status))), Type: "status"}
	}
	if c.Skipped == nil && len(row.NotExercised) > 0 {
		out = append(out, "not exercised: "+reasons(row.NotExercised, ""))
	}
	if row.Output != "" {
		out = append(out, output(row.Output))
	}
	if len(out) > 0 {
		c.SystemOut = &junitText{Text: strings.Join(out, "\n")}
	}
	return c
}

// junitFailure returns the failure element of a failed row.
func junitFailure(run *Run, row Row) *junitProblem {
	p := &junitProblem{Message: "the row failed without recording a failure", Type: "failed"}
	if len(row.Failures) > 0 {
		first := row.Failures[0]
		p.Message = field(first.Message)
		if len(row.Failures) > 1 {
			p.Message += fmt.Sprintf(" (and %d more)", len(row.Failures)-1)
		}
		p.Type = field(nonEmpty(string(first.Obligation), "failed"))
	}
	p.Body = failureText(run, row)
	return p
}

// failureText lists every failure of row as plain text, then its repro line.
func failureText(run *Run, row Row) string {
	var b strings.Builder
	for i, f := range row.Failures {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "failure %d of %d: [%s] %s\n", i+1, len(row.Failures), obligationName(run, f.Obligation), field(f.Message))
		if f.Expected != "" {
			fmt.Fprintf(&b, "expected: %s\n", field(f.Expected))
		}
		if f.Got != "" {
			fmt.Fprintf(&b, "got:      %s\n", field(f.Got))
		}
		if f.Diff != "" {
			fmt.Fprintf(&b, "diff:\n%s\n", field(f.Diff))
		}
		if f.Timeline != nil {
			fmt.Fprintf(&b, "timeline: %s\n", timelineSummary(viewOf(f.Timeline)))
			for _, l := range strings.SplitAfter(strings.TrimSuffix(timelineText(f.Timeline), "\n"), "\n") {
				b.WriteString("  " + l)
			}
			b.WriteString("\n")
		}
		if lines, dropped := trail(f.Trail); len(lines) > 0 {
			b.WriteString("trail:\n")
			if dropped > 0 {
				fmt.Fprintf(&b, "  … (%s cut)\n", plural(dropped, "earlier operation"))
			}
			for _, l := range lines {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
		if f.Location != "" {
			fmt.Fprintf(&b, "at %s\n", field(f.Location))
		}
	}
	if len(row.NotExercised) > 0 {
		fmt.Fprintf(&b, "\nnot exercised: %s\n", reasons(row.NotExercised, ""))
	}
	if row.Repro != "" {
		fmt.Fprintf(&b, "\nrepro: %s\n", field(row.Repro))
	}
	return b.String()
}

// obligationName is "ob:5 Fencing", or the bare ID when the catalogue does
// not hold it.
func obligationName(run *Run, id ObligationID) string {
	if id == "" {
		return "no obligation named"
	}
	if o, ok := run.obligation(id); ok && o.Title != "" {
		return field(string(id)) + " " + field(o.Title)
	}
	return field(string(id))
}

// reasons joins the not-exercised parts of a row, or returns fallback when
// there are none.
func reasons(parts []string, fallback string) string {
	if len(parts) == 0 {
		return fallback
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = field(p)
	}
	return strings.Join(out, "; ")
}

// seconds formats d as JUnit wants times: seconds with three decimals.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// nonEmpty returns the first of its arguments that is not empty.
func nonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// mdBudget is the size past which writeMarkdown stops adding failure
// sections and points to report.html instead: a GitHub step summary holds
// at most 1 MiB.
const mdBudget = 256 << 10

// emoji marks a status in Markdown, where colour is not available.
func emoji(s Status) string {
	switch s {
	case StatusPassed:
		return "✅"
	case StatusFailed:
		return "❌"
	case StatusNotExercised:
		return "⚠️"
	case StatusNotRun:
		return "⏭️"
	}
	return "❓"
}

// writeMarkdown writes run as GitHub-flavoured Markdown for a CI step
// summary or a pull-request comment: a verdict line (✅ conformant or ❌ not
// conformant), the run's store, seed, version and duration, the counts, a
// table of rows (status, name, obligations, duration), then a section per
// failed row with each failure (the obligation's statement, the message,
// expected, got and diff in fenced code blocks, the timeline of the history
// it was found in, one event a line, in another, the trail) and the row's
// repro line in a code block, then the parts not exercised. Store text is
// cut to fieldMax per field (logs to outputMax, trails to their last
// trailMax lines), control characters made visible, Markdown punctuation
// (pipes, backticks, <, and the like) escaped outside code blocks, and
// newlines turned into <br>; code fences are longer than any run of
// backticks inside them. Once the page passes 256 KiB, the remaining
// failures are left to report.html.
func writeMarkdown(w io.Writer, run *Run) error {
	if run == nil {
		return errors.New("reports: write markdown: nil run")
	}
	var b bytes.Buffer
	mdHeader(&b, run)
	mdRows(&b, run)
	mdFailures(&b, run)
	mdNotExercised(&b, run)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("reports: write markdown: %w", err)
	}
	return nil
}

// mdHeader writes the verdict, the run's facts and the counts.
func mdHeader(b *bytes.Buffer, run *Run) {
	tool := md(nonEmpty(run.Tool, "conform"))
	c := run.Counts()
	v := run.Verdict()
	mark := map[bool]string{true: "✅", false: "❌"}[v.Passing()]
	if v == VerdictInterrupted || v == VerdictEmpty {
		mark = "⏹️"
	}
	fmt.Fprintf(b, "# %s %s: %s", mark, tool, v.Label())
	b.WriteString("\n\n")
	fmt.Fprintf(b, "- **Store:** %s\n- **Seed:** %d\n- **Version:** %s\n- **Duration:** %s\n",
		md(run.Store), run.Seed, md(nonEmpty(run.Version, "unknown")), duration(run.Duration))
	if !run.Start.IsZero() {
		fmt.Fprintf(b, "- **Started:** %s\n", run.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if len(run.Failpoints) > 0 {
		fps := make([]string, len(run.Failpoints))
		for i, fp := range run.Failpoints {
			fps[i] = md(fp)
		}
		fmt.Fprintf(b, "- **Failpoints:** %s\n", strings.Join(fps, ", "))
	}
	if run.LabelFilter != "" {
		fmt.Fprintf(b, "- **Label filter:** %s\n", md(run.LabelFilter))
	}
	if c := run.campaign(); c != "" {
		fmt.Fprintf(b, "- **Campaign:** %s\n", md(c))
	}
	b.WriteString("\n**Rows:** ")
	for i, s := range statuses {
		if i > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(b, "%s %d %s", emoji(s), c[s], s.label())
		if s == StatusPassed {
			b.WriteString(inPartNote(run.passedInPart()))
		}
	}
	if n := run.notSelectedCount(); n > 0 {
		fmt.Fprintf(b, " · %d not selected", n)
	}
	if unknown := len(run.Selected()) - c[StatusPassed] - c[StatusFailed] - c[StatusNotExercised] - c[StatusNotRun]; unknown > 0 {
		fmt.Fprintf(b, " · %s %d with an unknown status", emoji(""), unknown)
	}
	b.WriteString("\n")
	if run.Interrupted {
		b.WriteString("\n> [!WARNING]\n> The run was interrupted: rows marked not run did not run, so the store is not certified.\n")
	}
	if why := run.Reasons(); len(why) > 0 && !run.Interrupted {
		b.WriteString("\n**Why:**\n\n")
		for _, w := range why {
			fmt.Fprintf(b, "- %s\n", md(w))
		}
	}
	b.WriteString("\n")
}

// mdRows writes the table of rows.
func mdRows(b *bytes.Buffer, run *Run) {
	if len(run.Rows) == 0 {
		b.WriteString("No rows ran.\n\n")
		return
	}
	b.WriteString("| Status | Row | Obligations | Duration |\n| --- | --- | --- | --- |\n")
	for _, row := range run.Rows {
		obs := make([]string, len(row.Obligations))
		for i, id := range row.Obligations {
			obs[i] = md(string(id))
		}
		fmt.Fprintf(b, "| %s %s | %s | %s | %s |\n", emoji(row.Status), md(row.Status.label()),
			md(nonEmpty(row.Name, row.Spec, string(row.ID))), strings.Join(obs, ", "), duration(row.Duration))
	}
	b.WriteString("\n")
}

// mdFailures writes one section per failed row, within mdBudget.
func mdFailures(b *bytes.Buffer, run *Run) {
	var failed []Row
	for _, row := range run.Rows {
		if row.Status == StatusFailed {
			failed = append(failed, row)
		}
	}
	if len(failed) == 0 {
		return
	}
	b.WriteString("## Failures\n\n")
	for i, row := range failed {
		if b.Len() > mdBudget {
			fmt.Fprintf(b, "… %s not shown here to keep this page short; see report.html.\n\n",
				plural(len(failed)-i, "more failed row"))
			return
		}
		mdFailedRow(b, run, row)
	}
}

// mdFailedRow writes the section of one failed row.
func mdFailedRow(b *bytes.Buffer, run *Run, row Row) {
	fmt.Fprintf(b, "### ❌ %s\n\n", md(nonEmpty(row.Name, string(row.ID))))
	fmt.Fprintf(b, "%s · %s · %s\n\n", md(string(row.Chapter)), md(string(row.ID)), md(row.Spec))
	if len(row.Failures) == 0 {
		b.WriteString("The row failed without recording a failure.\n\n")
	}
	for i, f := range row.Failures {
		if b.Len() > mdBudget {
			fmt.Fprintf(b, "… %s of this row not shown here to keep this page short; see report.html.\n\n",
				plural(len(row.Failures)-i, "more failure"))
			break
		}
		fmt.Fprintf(b, "#### Failure %d of %d: %s\n\n", i+1, len(row.Failures), md(obligationName(run, f.Obligation)))
		if o, ok := run.obligation(f.Obligation); ok && o.Statement != "" {
			fmt.Fprintf(b, "> %s\n\n", md(o.Statement))
		}
		fmt.Fprintf(b, "%s\n\n", md(f.Message))
		mdBlock(b, "Expected", "", f.Expected)
		mdBlock(b, "Got", "", f.Got)
		mdBlock(b, "Diff", "diff", f.Diff)
		if f.Timeline != nil {
			fmt.Fprintf(b, "**Timeline** (%s)\n\n", md(timelineSummary(viewOf(f.Timeline))))
			mdFence(b, "", timelineText(f.Timeline))
		}
		if lines, dropped := trail(f.Trail); len(lines) > 0 {
			fmt.Fprintf(b, "<details><summary>Trail (%s)</summary>\n\n", plural(len(f.Trail), "operation"))
			text := strings.Join(lines, "\n")
			if dropped > 0 {
				text = fmt.Sprintf("… (%s cut)\n%s", plural(dropped, "earlier operation"), text)
			}
			mdFence(b, "", text)
			b.WriteString("</details>\n\n")
		}
		if f.Location != "" {
			fmt.Fprintf(b, "At %s\n\n", md(f.Location))
		}
	}
	if row.Repro != "" {
		b.WriteString("**Repro**\n\n")
		mdFence(b, "sh", field(row.Repro))
	}
	if row.Output != "" {
		b.WriteString("<details><summary>Log</summary>\n\n")
		mdFence(b, "", output(row.Output))
		b.WriteString("</details>\n\n")
	}
}

// mdBlock writes a labelled fenced code block of one field, if it is set.
func mdBlock(b *bytes.Buffer, label, lang, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(b, "**%s**\n\n", label)
	mdFence(b, lang, field(text))
}

// mdFence writes text, already cut and made visible, as a fenced code block
// whose fence is longer than any run of backticks in text.
func mdFence(b *bytes.Buffer, lang, text string) {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", fence, lang, strings.TrimSuffix(text, "\n"), fence)
}

// mdNotExercised lists the parts of rows that could not be reached.
func mdNotExercised(b *bytes.Buffer, run *Run) {
	var lines []string
	for _, row := range run.Rows {
		name := md(nonEmpty(row.Name, string(row.ID)))
		if row.Status == StatusNotExercised && len(row.NotExercised) == 0 {
			lines = append(lines, fmt.Sprintf("- **%s**: the row could reach none of what it checks", name))
		}
		for _, part := range row.NotExercised {
			lines = append(lines, fmt.Sprintf("- **%s** (%s): %s", name, md(row.Status.label()), md(part)))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Not exercised\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}

// md makes one field of store text safe as inline Markdown, in a paragraph
// or a table cell: cut, control characters made visible, punctuation that
// Markdown or GitHub would read as markup backslash-escaped, newlines as <br>.
func md(s string) string {
	s = field(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	lead := leadingMarker(s)
	for i, r := range s {
		if i == lead {
			b.WriteByte('\\')
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '&', '~', '$', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString("<br>")
		case '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// leadingMarker returns the index of the character that would make s, at the
// start of a line, a list item or a heading underline ("-", "+", "=", "3."
// or "3)"), or -1.
func leadingMarker(s string) int {
	if s == "" {
		return -1
	}
	switch s[0] {
	case '-', '+', '=':
		return 0
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return i
	}
	return -1
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

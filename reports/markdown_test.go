package reports

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func markdown(t *testing.T, run *Run) string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeMarkdown(&buf, run); err != nil {
		t.Fatalf("writeMarkdown: %v", err)
	}
	return buf.String()
}

// TestSummariesCountRowsPassedInPart: a row that passed what ran and
// left parts not exercised is counted as passed, and report.md and
// report.html say how many of the rows passed did so in part.
func TestSummariesCountRowsPassedInPart(t *testing.T) {
	run := sampleRun()
	if n := run.passedInPart(); n != 0 {
		t.Fatalf("the sample has %d rows passed in part, want 0", n)
	}
	for i := range run.Rows {
		if row := &run.Rows[i]; row.Status == StatusPassed && !row.NotSelected {
			row.NotExercised = []string{"a part the store never reached"}
			break
		}
	}
	if n := run.passedInPart(); n != 1 {
		t.Fatalf("passedInPart = %d, want 1", n)
	}
	if s := markdown(t, run); !strings.Contains(s, "**Rows:** ✅ 3 passed (1 of them in part) · ❌ 2 failed") {
		t.Errorf("report.md does not say a row passed in part:\n%s", s)
	}
	var buf bytes.Buffer
	if err := writeHTML(&buf, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "passed (1 of them in part)") {
		t.Errorf("report.html does not say a row passed in part")
	}
}

func TestMarkdownSample(t *testing.T) {
	s := markdown(t, sampleRun())
	for _, want := range []string{
		"# ❌ conform: not conformant\n",
		"**Rows:** ✅ 3 passed · ❌ 2 failed · ⚠️ 1 not exercised · ⏭️ 0 not run · 1 not selected",
		"| ❌ failed | Stale fence | ob:5, ob:fence | 1.5s |",
		"| ⏭️ not run | Retry | ob:3 | 1.5s |",
		"#### Failure 1 of 1: ob:1 All or nothing\n\n> A load shows a batch completely",
		"**Expected**\n\n```\nhead record/b at version 3\n```",
		"**Diff**\n\n```diff\n@@ heads @@\n-record/b v3\n+record/b v2\n```",
		"```sh\nconform reproduce --seed 42 --row stale-fence\n```",
		"#### Failure 2 of 2: ob:fence Fence leases",
		"- **Takeover with a commit in flight** (not exercised): hold a commit in flight: the store has no in-store failpoints",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report.md lacks %q:\n%s", want, s)
		}
	}
	if got := strings.Count(s, "\n| "); got != 2+len(sampleRun().Rows) {
		t.Errorf("report.md has %d table lines, want a header, a rule and one per row", got)
	}
}

func TestMarkdownVerdicts(t *testing.T) {
	if s := markdown(t, passingRun()); !strings.HasPrefix(s, "# ✅ conform: conformant\n") {
		t.Errorf("passing run verdict: %q", strings.SplitN(s, "\n", 2)[0])
	}
	r := passingRun()
	r.Rows[1].Status = StatusNotExercised
	r.Rows[1].NotExercised = []string{"hold: the store never reached commit-locked"}
	if s := markdown(t, r); !strings.HasPrefix(s, "# ❌ conform: not conformant\n") || !strings.Contains(s, "- row reopen: not exercised: hold") {
		t.Errorf("a run with a row not exercised:\n%s", s)
	}
	r.Rows[1].InStoreOnly, r.WithoutInStoreFaults = true, true
	if s := markdown(t, r); !strings.HasPrefix(s, "# ✅ conform: conformant without in-store faults\n") || !strings.Contains(s, "as declared") {
		t.Errorf("a declared run:\n%s", s)
	}
	r = passingRun()
	r.Interrupted = true
	if s := markdown(t, r); !strings.HasPrefix(s, "# ⏹️ conform: interrupted, no verdict\n") || strings.Contains(s, "not conformant") {
		t.Errorf("interrupted run:\n%s", s)
	}
	r = passingRun()
	for i := range r.Rows {
		r.Rows[i].NotSelected = true
	}
	if s := markdown(t, r); !strings.HasPrefix(s, "# ⏹️ conform: empty selection, no verdict\n") {
		t.Errorf("empty run:\n%s", s)
	}
}

func TestMarkdownFenceOutrunsBackticks(t *testing.T) {
	r := sampleRun()
	r.Rows[2].Failures[0].Expected = "a ``` b ```` c"
	s := markdown(t, r)
	if !strings.Contains(s, "**Expected**\n\n`````\na ``` b ```` c\n`````\n") {
		t.Errorf("the fence does not outrun the backticks inside:\n%s", s)
	}
}

// ownTag matches the HTML tags writeMarkdown writes itself.
var ownTag = regexp.MustCompile(`^</?(br|details|summary)>`)

func TestMarkdownHostile(t *testing.T) {
	s := markdown(t, hostileRun())
	assertNoControl(t, "report.md", s)
	if len(s) > 400<<10 {
		t.Errorf("report.md is %d bytes for hostile input; want it bounded", len(s))
	}
	if !strings.Contains(s, "bytes cut)") {
		t.Error("report.md does not say it cut the long text")
	}
	inFence := ""
	for n, line := range strings.Split(s, "\n") {
		if inFence != "" {
			if line == inFence {
				inFence = ""
			}
			continue
		}
		if m := regexp.MustCompile("^(`{3,})[a-z]*$").FindStringSubmatch(line); m != nil {
			inFence = m[1]
			continue
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c == '\\':
				i++ // the next character is escaped
			case c == '<' && !ownTag.MatchString(line[i:]):
				t.Fatalf("line %d: unescaped < outside code: %.80q", n+1, line[i:])
			case c == '`':
				t.Fatalf("line %d: unescaped backtick outside code: %.80q", n+1, line[max(0, i-20):])
			case c == '|' && !strings.HasPrefix(line, "| "):
				t.Fatalf("line %d: unescaped pipe outside a table: %.80q", n+1, line[max(0, i-20):])
			}
		}
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---") {
			if cells := countUnescaped(line, '|'); cells != 5 {
				t.Errorf("line %d: table row has %d unescaped pipes, want 5: %.120q", n+1, cells, line)
			}
		}
	}
	if inFence != "" {
		t.Error("report.md ends inside a code fence")
	}
}

// countUnescaped counts the occurrences of c in s not escaped by a
// backslash (itself not escaped).
func countUnescaped(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == c {
			n++
		}
	}
	return n
}

func TestMarkdownBudget(t *testing.T) {
	run := sampleRun()
	long := strings.Repeat("x", fieldMax)
	f := Failure{Message: long, Obligation: "ob:1", Expected: long, Got: long, Diff: long}
	run.Rows = nil
	for i := 0; i < 100; i++ {
		run.Rows = append(run.Rows, Row{ID: "r", Name: "row", Status: StatusFailed, Failures: []Failure{f, f, f}})
	}
	s := markdown(t, run)
	if len(s) > mdBudget+64<<10 {
		t.Errorf("report.md is %d bytes, want at most the budget and one failure more", len(s))
	}
	if !strings.Contains(s, "more failed rows not shown here") {
		t.Error("report.md does not say it left failures out")
	}
	run.Rows = run.Rows[:1]
	run.Rows[0].Failures = make([]Failure, 100)
	for i := range run.Rows[0].Failures {
		run.Rows[0].Failures[i] = f
	}
	if s := markdown(t, run); len(s) > mdBudget+64<<10 || !strings.Contains(s, "more failures of this row not shown here") {
		t.Errorf("one row with 100 failures: %d bytes, cut note present: %v", len(s), strings.Contains(s, "not shown here"))
	}
}

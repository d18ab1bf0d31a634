package reports

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func page(t *testing.T, run *Run) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, run); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return buf.String()
}

// matrixCell is one cell of the parsed matrix.
type matrixCell struct{ ob, class, text string }

// parseMatrix reads the matrix of an HTML report: the obligation IDs of the
// header, and for each table row with data-row, its obligation cells.
func parseMatrix(t *testing.T, s string) (header []string, rows map[string][]matrixCell, order []string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	rows = map[string][]matrixCell{}
	inMatrix, inHead := false, false
	row := ""
	var cell *matrixCell
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			a := attrs(tok)
			switch {
			case tok.Name.Local == "table" && a["id"] == "matrix":
				inMatrix = true
			case !inMatrix:
			case tok.Name.Local == "thead":
				inHead = true
			case inHead && tok.Name.Local == "th" && a["data-ob"] != "":
				header = append(header, a["data-ob"])
			case tok.Name.Local == "tr" && a["data-row"] != "":
				row = a["data-row"]
				order = append(order, row)
			case tok.Name.Local == "td" && strings.Contains(a["class"], "cell"):
				if row == "" {
					t.Fatal("a matrix cell outside a data row")
				}
				cell = &matrixCell{ob: a["data-ob"], class: a["class"]}
				depth = 0
			case cell != nil:
				depth++
			}
		case xml.EndElement:
			switch {
			case !inMatrix:
			case tok.Name.Local == "table":
				return header, rows, order
			case tok.Name.Local == "thead":
				inHead = false
			case cell != nil && depth == 0 && tok.Name.Local == "td":
				rows[row] = append(rows[row], *cell)
				cell = nil
			case cell != nil:
				depth--
			}
		case xml.CharData:
			if cell != nil && depth == 0 {
				cell.text += string(tok)
			}
		}
	}
	t.Fatal("report.html has no closed matrix table")
	return nil, nil, nil
}

func attrs(e xml.StartElement) map[string]string {
	m := map[string]string{}
	for _, a := range e.Attr {
		m[a.Name.Local] = a.Value
	}
	return m
}

func TestHTMLMatrixHasOneCellPerPair(t *testing.T) {
	run := sampleRun()
	run.Rows[0].Obligations = append(run.Rows[0].Obligations, "ob:extra") // not in the catalogue: a column of its own
	s := page(t, run)
	if n := strings.Count(s, "<em>not in the catalogue</em>"); n != 1 {
		t.Errorf("report.html marks %d obligations as not in the catalogue, want 1 (ob:extra)", n)
	}
	header, rows, order := parseMatrix(t, s)
	want := []string{"ob:1", "ob:2", "ob:3", "ob:4", "ob:5", "ob:6", "ob:7", "ob:8", "ob:9", "ob:fence", "ob:errors", "ob:extra"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Fatalf("matrix columns = %v, want %v", header, want)
	}
	if len(order) != len(run.Rows) {
		t.Fatalf("matrix has %d rows, want %d", len(order), len(run.Rows))
	}
	for _, r := range order {
		var got []string
		for _, c := range rows[r] {
			got = append(got, c.ob)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("matrix row %s has cells %v, want one per obligation %v", r, got, want)
		}
	}
	cell := func(row, ob string) matrixCell {
		for _, c := range rows[row] {
			if c.ob == ob {
				return c
			}
		}
		t.Fatalf("no cell (%s, %s)", row, ob)
		return matrixCell{}
	}
	checks := []struct {
		row, ob, class, text string
	}{
		{"0", "ob:fence", "passed", "✓"},
		{"0", "ob:extra", "passed", "✓"},
		{"0", "ob:1", "none", ""},
		{"2", "ob:1", "failed", "✗"}, // kill: its failure names ob:1
		{"2", "ob:2", "passed", "✓"}, // kill: no failure names ob:2
		{"3", "ob:5", "failed", "✗"},
		{"3", "ob:fence", "failed", "✗"},
		{"4", "ob:1", "not-exercised", "◌"},
		{"5", "ob:3", "not-run", "–"},
		{"5", "ob:1", "none", ""},
	}
	for _, c := range checks {
		got := cell(c.row, c.ob)
		if got.class != "cell "+c.class || got.text != c.text {
			t.Errorf("cell (%s, %s) = class %q text %q, want class %q text %q", c.row, c.ob, got.class, got.text, "cell "+c.class, c.text)
		}
	}
}

func TestHTMLUnattributedFailureFailsEveryCell(t *testing.T) {
	run := sampleRun()
	run.Rows[2].Failures[0].Obligation = "" // kill: a failure that names no obligation
	_, rows, _ := parseMatrix(t, page(t, run))
	for _, c := range rows["2"] {
		if c.ob == "ob:1" || c.ob == "ob:2" {
			if c.class != "cell failed" {
				t.Errorf("cell (kill, %s) = %q, want failed", c.ob, c.class)
			}
		}
	}
}

func TestHTMLSample(t *testing.T) {
	s := page(t, sampleRun())
	for _, want := range []string{
		"✗ not conformant",
		"<code>sqlite:///tmp/realm.db</code>",
		"<code>42</code>",
		`<span class="failed">✗ 2 failed</span>`,
		`<section class="row failed" id="row-2">`,
		`<a href="#row-2">Kill</a>`,
		`<blockquote>A load shows a batch completely, in every scope it touches, or not at all.</blockquote>`,
		`<pre class="expected">head record/b at version 3</pre>`,
		`<span class="del">-record/b v3</span>`,
		`<span class="add">&#43;record/b v2</span>`,
		`<pre class="repro"><code>conform reproduce --seed 42 --row kill</code></pre>`,
		`<li>hold a commit in flight: the store has no in-store failpoints</li>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(s, banned) {
			t.Errorf("report.html is not self-contained: it holds %q", banned)
		}
	}
	if p := page(t, passingRun()); !strings.Contains(p, "✓ conformant") || strings.Contains(p, "Findings") {
		t.Error("a passing run's page lacks the verdict or shows findings")
	}
}

func TestHTMLHostile(t *testing.T) {
	s := page(t, hostileRun())
	if strings.Contains(s, "<script") {
		i := strings.Index(s, "<script")
		t.Fatalf("report.html holds a raw <script: %.80q", s[i:])
	}
	if strings.Contains(s, "javascript:") && strings.Contains(s, `href="javascript`) {
		t.Error("report.html links to javascript:")
	}
	if !strings.Contains(s, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("report.html does not show the store's markup as text")
	}
	if !strings.Contains(s, `\x00`) || !strings.Contains(s, `\x1b[31m`) || !strings.Contains(s, `\u202e`) {
		t.Error("report.html does not make control characters visible")
	}
	assertNoControl(t, "report.html", s)
	if len(s) > 600<<10 {
		t.Errorf("report.html is %d bytes for hostile input; want it bounded", len(s))
	}
	parseMatrix(t, s) // still well formed
}

package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func page(t *testing.T, run *Run) string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeHTML(&buf, run); err != nil {
		t.Fatalf("writeHTML: %v", err)
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

// node is an element of a parsed page: enough of a DOM to find things in.
type node struct {
	name  string
	attr  map[string]string
	kids  []*node
	text  string // all the text inside, its descendants' included
	inner []any  // kids and text in order, for text
}

// parseHTML parses a page written by writeHTML into its element tree.
func parseHTML(t *testing.T, s string) *node {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	root := &node{name: "#root"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: attrs(tok)}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			for _, n := range stack {
				n.text += string(tok)
			}
		}
	}
	return root
}

// find returns the elements under n, in document order, for which ok holds.
func (n *node) find(ok func(*node) bool) []*node {
	var out []*node
	for _, k := range n.kids {
		if ok(k) {
			out = append(out, k)
		}
		out = append(out, k.find(ok)...)
	}
	return out
}

// hasClass reports whether n's class attribute holds class c.
func (n *node) hasClass(c string) bool {
	for _, f := range strings.Fields(n.attr["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// byClass returns the elements under n with the tag name and the class.
func (n *node) byClass(name, class string) []*node {
	return n.find(func(k *node) bool { return k.name == name && k.hasClass(class) })
}

// byID returns the element under n with the id, or nil.
func (n *node) byID(id string) *node {
	if f := n.find(func(k *node) bool { return k.attr["id"] == id }); len(f) > 0 {
		return f[0]
	}
	return nil
}

// finding is one line of the findings summary, as the page shows it.
type finding struct {
	class, href, link, msg, repro string
	obs                           []string
}

// findings returns the lines of the page's findings summary, and whether
// the page has one.
func findings(t *testing.T, doc *node) ([]finding, bool) {
	t.Helper()
	list := doc.byID("findings")
	if list == nil {
		return nil, false
	}
	var out []finding
	for _, li := range list.find(func(k *node) bool { return k.name == "li" }) {
		f := finding{class: li.attr["class"]}
		if a := li.find(func(k *node) bool { return k.name == "a" }); len(a) > 0 {
			f.href, f.link = a[0].attr["href"], a[0].text
		}
		for _, c := range li.byClass("code", "ob") {
			f.obs = append(f.obs, c.text)
		}
		if m := li.byClass("span", "msg"); len(m) == 1 {
			f.msg = m[0].text
		}
		if r := li.byClass("code", "repro"); len(r) == 1 {
			f.repro = r[0].text
		}
		out = append(out, f)
	}
	return out, true
}

func TestHTMLFindingsSummary(t *testing.T) {
	run := sampleRun()
	extra := Row{Chapter: "long-run", ID: "crash", Name: "Crash", Status: StatusNotRun, Obligations: []ObligationID{"ob:2"}}
	run.Rows = append(run.Rows, extra) // selected, did not run, no details
	s := page(t, run)
	if i, j := strings.Index(s, `id="findings"`), strings.Index(s, `id="matrix"`); i < 0 || j < 0 || i > j {
		t.Fatalf("the findings summary (at %d) is not above the matrix (at %d)", i, j)
	}
	doc := parseHTML(t, s)
	got, ok := findings(t, doc)
	if !ok {
		t.Fatal("a failing run's page has no findings summary")
	}
	want := []finding{
		{class: "failed", href: "#row-2", link: "✗ Kill", obs: []string{"ob:1"},
			msg: "the next writer saw the batch in session/a but not in record/b", repro: "conform reproduce --seed 42 --row kill"},
		{class: "failed", href: "#row-3", link: "✗ Stale fence", obs: []string{"ob:5", "ob:fence"},
			msg: "a superseded writer's batch became visible (and 1 more failure)", repro: "conform reproduce --seed 42 --row stale-fence"},
		{class: "not-exercised", href: "#row-4", link: "◌ Takeover with a commit in flight", obs: []string{"ob:1", "ob:5"},
			msg: "Not exercised: hold a commit in flight: the store has no in-store failpoints"},
		// retry is left out: the label filter did not select it.
		{class: "not-run", href: "#matrix-row-7", link: "– Crash", obs: []string{"ob:2"}, msg: "The row did not run."},
	}
	if len(got) != len(want) {
		t.Fatalf("the findings summary has %d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.class != w.class || g.href != w.href || g.link != w.link || g.msg != w.msg || g.repro != w.repro ||
			strings.Join(g.obs, " ") != strings.Join(w.obs, " ") {
			t.Errorf("finding %d = %+v, want %+v", i, g, w)
		}
		if doc.byID(strings.TrimPrefix(g.href, "#")) == nil {
			t.Errorf("finding %d links to %s, which the page lacks", i, g.href)
		}
	}
	if _, ok := findings(t, parseHTML(t, page(t, passingRun()))); ok {
		t.Error("a conformant run's page has a findings summary")
	}
	run.Interrupted = true
	got, _ = findings(t, parseHTML(t, page(t, run)))
	for _, f := range got {
		if f.class == "not-run" {
			t.Errorf("an interrupted run's summary lists a row not run: %+v", f)
		}
	}
}

func TestHTMLFindingsSummaryHostile(t *testing.T) {
	doc := parseHTML(t, page(t, hostileRun()))
	got, ok := findings(t, doc)
	if !ok || len(got) != 3 {
		t.Fatalf("the hostile run's findings summary has %d lines (present: %v), want 3", len(got), ok)
	}
	first := strings.SplitN(hostile, "\n", 2)[0]
	for i, f := range got {
		if n := utf8.RuneCountInString(f.msg); n > htmlShortMessage+len(" … (and 1 more failure)") {
			t.Errorf("finding %d shows a message of %d characters, want it cut short", i, n)
		}
		if n := utf8.RuneCountInString(f.link); n > htmlShortMessage+4 {
			t.Errorf("finding %d shows a name of %d characters, want it cut short", i, n)
		}
		for _, ob := range f.obs {
			if n := utf8.RuneCountInString(ob); n > htmlShortID+2 {
				t.Errorf("finding %d shows an obligation of %d characters, want at most %d", i, n, htmlShortID+2)
			}
		}
	}
	// The failed row: its message is the hostile text's first line, made visible.
	f := got[0]
	if !strings.HasPrefix(f.msg, visible(first)) || !strings.Contains(f.msg, `\u202e`) || !strings.Contains(f.msg, `\x1b[31m`) {
		t.Errorf("the summary does not show the message's first line with its controls made visible: %.120q", f.msg)
	}
	if !strings.HasPrefix(f.repro, "<script>alert(1)</script>") || !strings.Contains(f.repro, `\x00`) {
		t.Errorf("the summary's repro line is not the repro made visible: %.80q", f.repro)
	}
	// In the markup, the repro's script is text.
	s := page(t, hostileRun())
	i := strings.Index(s, `<code class="repro">`)
	if i < 0 || !strings.HasPrefix(s[i+len(`<code class="repro">`):], "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the summary's repro line is not escaped in the markup")
	}
}

func TestShort(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 10, "abc"},
		{"abc\n", 10, "abc"},
		{"abc\ndef", 10, "abc …"},
		{"a\x00b\u202e", 20, `a\x00b\u202e`},
		{"a\x00b\u202e", 10, `a\x00b\u20 …`}, // the bound counts what the reader sees
		{strings.Repeat("é", 30), 10, strings.Repeat("é", 10) + " …"},
		{"one two three", 10, "one two …"},
	} {
		if got := short(c.in, c.n); got != c.want {
			t.Errorf("short(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	long := strings.Repeat("x", 1<<20)
	if got := short(long, 100); utf8.RuneCountInString(got) != 102 {
		t.Errorf("short of a mebibyte is %d characters, want 102", utf8.RuneCountInString(got))
	}
	// A four-byte character across the byte bound is not split.
	if got := short("a"+strings.Repeat("😀", 50), 40); !utf8.ValidString(got) || strings.Contains(got, `\x`) {
		t.Errorf("short split a character: %q", got)
	}
}

func TestHTMLTrailFolds(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("op %d", i+1)
		}
		return out
	}
	for _, c := range []struct {
		n, early, start, tailStart int
		cut                        string
	}{
		{n: 3},
		{n: htmlTrailTail + 2},
		{n: 50, early: 40, start: 1, tailStart: 41},
		{n: 300, early: trailMax - htmlTrailTail, start: 101, tailStart: 291, cut: "… 100 earlier operations cut"},
	} {
		run := sampleRun()
		run.Rows[2].Failures[0].Trail = lines(c.n)
		doc := parseHTML(t, page(t, run))
		sec := doc.byID("row-2")
		if sec == nil {
			t.Fatal("no section row-2")
		}
		folds := sec.byClass("details", "early")
		trails := sec.byClass("ol", "trail")
		last := fmt.Sprintf("op %d", c.n)
		if c.early == 0 {
			if len(folds) != 0 || len(trails) != 1 {
				t.Errorf("a trail of %d lines: %d folds, %d lists; want it all open", c.n, len(folds), len(trails))
			}
			if n := len(trails[0].find(func(k *node) bool { return k.name == "li" })); n != c.n {
				t.Errorf("a trail of %d lines shows %d", c.n, n)
			}
			continue
		}
		if len(folds) != 1 || len(trails) != 2 {
			t.Fatalf("a trail of %d lines: %d folds, %d lists; want 1 fold and 2 lists", c.n, len(folds), len(trails))
		}
		fold := folds[0]
		if _, open := fold.attr["open"]; open {
			t.Errorf("the earlier operations of a trail of %d lines are open", c.n)
		}
		if s := fold.find(func(k *node) bool { return k.name == "summary" }); len(s) != 1 || s[0].text != plural(c.early, "earlier operation") {
			t.Errorf("the fold of a trail of %d lines is not summed up as %q", c.n, plural(c.early, "earlier operation"))
		}
		early, tail := trails[0], trails[1]
		if n := len(early.find(func(k *node) bool { return k.name == "li" })); n != c.early || early.attr["start"] != fmt.Sprint(c.start) {
			t.Errorf("the fold of a trail of %d lines holds %d lines from %s, want %d from %d", c.n, n, early.attr["start"], c.early, c.start)
		}
		if len(fold.byClass("ol", "trail")) != 1 {
			t.Error("the earlier lines are not inside the fold")
		}
		tl := tail.find(func(k *node) bool { return k.name == "li" })
		if len(tl) != htmlTrailTail || tail.attr["start"] != fmt.Sprint(c.tailStart) || tl[len(tl)-1].text != last {
			t.Errorf("the open tail of a trail of %d lines: %d lines from %s ending %q, want %d from %d ending %q",
				c.n, len(tl), tail.attr["start"], tl[len(tl)-1].text, htmlTrailTail, c.tailStart, last)
		}
		if strings.Contains(fold.text, last) || !strings.Contains(fold.text, fmt.Sprintf("op %d", c.tailStart-1)) {
			t.Errorf("the fold of a trail of %d lines does not end right before the tail", c.n)
		}
		if got := strings.Contains(sec.text, c.cut); c.cut != "" && !got {
			t.Errorf("a trail of %d lines does not say %q", c.n, c.cut)
		}
	}
}

func TestHTMLFailingRowShowsFailureFirst(t *testing.T) {
	s := page(t, sampleRun())
	doc := parseHTML(t, s)
	sec := doc.byID("row-2")
	about := sec.byClass("details", "about")
	if len(about) != 1 {
		t.Fatalf("row-2 has %d folds of the row's facts, want 1", len(about))
	}
	if _, open := about[0].attr["open"]; open {
		t.Error("the row's facts are open")
	}
	if !strings.Contains(about[0].text, "Kill spec") || len(sec.byClass("p", "spec")) != 1 || len(about[0].byClass("p", "spec")) != 1 {
		t.Error("the row's spec is not inside the fold")
	}
	start := strings.Index(s, `id="row-2"`)
	msg := strings.Index(s[start:], `<p class="message">`)
	fold := strings.Index(s[start:], `<details class="about">`)
	if msg < 0 || fold < 0 || msg > fold {
		t.Errorf("in row-2, the failure (at %d) does not come before the fold (at %d)", msg, fold)
	}
}

// header is one obligation column's header cell.
type header struct{ ob, class, title, text string }

func matrixHeader(t *testing.T, doc *node) []header {
	t.Helper()
	m := doc.byID("matrix")
	if m == nil {
		t.Fatal("no matrix")
	}
	var out []header
	for _, th := range m.find(func(k *node) bool { return k.name == "th" && k.attr["data-ob"] != "" }) {
		out = append(out, header{th.attr["data-ob"], th.attr["class"], th.attr["title"], th.text})
	}
	return out
}

func TestHTMLMatrixHeaderIsShort(t *testing.T) {
	run := sampleRun()
	run.Obligations = append(run.Obligations,
		Obligation{ID: "adm:exclusion", Title: "Writers exclude everyone", Statement: "A guard excludes every other holder."},
		Obligation{ID: "adm:bound", Title: "Waiting is bounded"})
	long := ObligationID("ob:" + strings.Repeat("z", 100))
	run.Rows[0].Obligations = append(run.Rows[0].Obligations, long, "adm:bound")
	doc := parseHTML(t, page(t, run))
	hs := matrixHeader(t, doc)
	if len(hs) != 14 {
		t.Fatalf("the matrix has %d obligation columns, want 14", len(hs))
	}
	for _, h := range hs {
		if h.ob == string(long) {
			if n := utf8.RuneCountInString(h.text); n > htmlShortID+2 || !strings.HasPrefix(string(long), strings.TrimSuffix(h.text, " …")) {
				t.Errorf("the header of a long ID shows %q (%d characters), want its first %d", h.text, n, htmlShortID)
			}
			continue
		}
		if h.text != h.ob {
			t.Errorf("the header of %s shows %q, want the ID alone", h.ob, h.text)
		}
		o, _ := run.obligation(ObligationID(h.ob))
		if o.Title != "" && !strings.Contains(h.title, o.Title) {
			t.Errorf("the header of %s has the tooltip %q, want its title %q in it", h.ob, h.title, o.Title)
		}
		if o.Statement != "" && !strings.Contains(h.title, o.Statement) {
			t.Errorf("the header of %s has the tooltip %q, want its statement in it", h.ob, h.title)
		}
	}
	// A column whose prefix differs from the one before starts a group, in
	// the header and in every row: the first adm: column, and the long ob:
	// ID, which comes after them as the catalogue lacks it.
	starts := func(ob string) bool { return ob == "adm:exclusion" || ob == string(long) }
	for _, h := range hs {
		group := strings.Contains(" "+h.class+" ", " group ")
		if group != starts(h.ob) {
			t.Errorf("header %.20s: group = %v", h.ob, group)
		}
	}
	_, rows, _ := parseMatrix(t, page(t, run))
	for r, cs := range rows {
		for _, c := range cs {
			if strings.Contains(c.class, "group") != starts(c.ob) {
				t.Errorf("row %s cell %.20s: class %q", r, c.ob, c.class)
			}
		}
	}
	// The header of the hostile run is cut too.
	for _, h := range matrixHeader(t, parseHTML(t, page(t, hostileRun()))) {
		if n := utf8.RuneCountInString(h.text); n > htmlShortID+2 {
			t.Errorf("a hostile header shows %d characters", n)
		}
	}
}

func TestHTMLUnselectedRowsDim(t *testing.T) {
	s := page(t, sampleRun())
	if !strings.Contains(s, "dim: the label filter left the row out") {
		t.Error("the legend does not explain the dim rows")
	}
	if strings.Contains(page(t, passingRun()), "dim: the label") {
		t.Error("the legend explains dim rows in a run that has none")
	}
	doc := parseHTML(t, s)
	trs := doc.byID("matrix").find(func(k *node) bool { return k.name == "tr" && k.attr["data-row"] != "" })
	for _, tr := range trs {
		dim := tr.hasClass("unselected")
		if want := tr.attr["data-row"] == "5"; dim != want {
			t.Errorf("matrix row %s: dim = %v, want %v", tr.attr["data-row"], dim, want)
		}
		if st := tr.byClass("td", "status"); dim && (len(st) != 1 || !strings.Contains(st[0].text, "not selected")) {
			t.Errorf("the dim row does not say it was not selected")
		}
	}
}

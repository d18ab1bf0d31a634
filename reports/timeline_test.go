package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/timeline"
)

// busyTimeline is a synthetic history of n operations on lanes processes,
// interleaved at random from seed: each process calls, waits a while and
// returns, again and again; now and then one is killed and opens again, or
// a call never returns. The model disagrees with the operation called at
// about two thirds of the way.
func busyTimeline(n, lanes int, seed uint64) *timeline.Timeline {
	rng := rand.New(rand.NewPCG(seed, seed))
	t := &timeline.Timeline{Highlight: -1}
	for i := range lanes {
		t.Lanes = append(t.Lanes, "p"+strconv.Itoa(i))
	}
	open := make([]int, lanes) // index+1 of the event in flight on each lane
	var clock int64
	labels := []string{"load session/a", "acquire Exclusive", "commit c%d tok=2 session/a record/b", "read session/a from=3 limit=4", "list session after=nil limit=2", "renew tok=2"}
	answers := []string{timeline.AnswerOK, timeline.AnswerOK, timeline.AnswerOK, "FencedOut", "Conflict", timeline.AnswerLost, timeline.AnswerOK}
	ops := 0
	for ops < n || anyOpen(open) {
		l := rng.IntN(lanes)
		clock++
		if i := open[l]; i > 0 {
			e := &t.Events[i-1]
			open[l] = 0
			if rng.IntN(40) == 0 {
				continue // never returns; its lane goes on as a new process would
			}
			e.Return = clock
			e.Answer = answers[rng.IntN(len(answers))]
			if e.Answer == timeline.AnswerOK {
				e.Result = "v" + strconv.Itoa(rng.IntN(9)+1)
			}
			continue
		}
		if ops >= n {
			continue
		}
		id := len(t.Events)
		if rng.IntN(12) == 0 {
			t.Events = append(t.Events, timeline.Event{ID: id, Lane: l, Call: clock, Return: clock + 1, Mark: timeline.MarkKill, Label: "kill", Answer: timeline.AnswerOK})
			clock++
			continue
		}
		label := labels[rng.IntN(len(labels))]
		if strings.Contains(label, "%d") {
			label = fmt.Sprintf(label, id)
		}
		e := timeline.Event{ID: id, Lane: l, Call: clock, Label: label}
		if strings.HasPrefix(label, "commit") && rng.IntN(4) == 0 {
			e.Faults = []timeline.Fault{{Layer: []string{"wrapper", "instore"}[rng.IntN(2)], Site: "in-flight", Kind: "kill"}}
		}
		t.Events = append(t.Events, e)
		open[l] = id + 1
		ops++
		if ops == 2*n/3 {
			t.Highlight = id
		}
	}
	return t
}

func anyOpen(open []int) bool {
	for _, o := range open {
		if o > 0 {
			return true
		}
	}
	return false
}

// timelineRun is a failing run whose one failure has t.
func timelineRun(t *timeline.Timeline) *Run {
	run := sampleRun()
	run.Rows = []Row{run.Rows[3]}
	run.Rows[0].Failures = []Failure{{Message: "the model disagrees", Obligation: "ob:5", Timeline: t}}
	return run
}

// plot is the parsed picture of one timeline.
type plot struct {
	svg, lanes *node
	width      int
	bars       []*node // g.op
	marks      []*node // path.mark
}

// plots returns the pictures of the timelines of a page, in order.
func plots(t *testing.T, s string) []plot {
	t.Helper()
	doc := parseHTML(t, s)
	var out []plot
	for _, tl := range doc.byClass("div", "tl") {
		p := plot{}
		if l := tl.byClass("svg", "tl-lanes"); len(l) == 1 {
			p.lanes = l[0]
		}
		svgs := tl.byClass("svg", "tl-plot")
		if len(svgs) != 1 || p.lanes == nil {
			t.Fatalf("a timeline has %d plots and lanes %v; want one of each", len(svgs), p.lanes != nil)
		}
		p.svg = svgs[0]
		p.width = atoi(t, p.svg.attr["width"])
		p.bars = p.svg.byClass("g", "op")
		p.marks = p.svg.byClass("path", "mark")
		out = append(out, p)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a whole number of pixels", s)
	}
	return n
}

// rect returns the x, y, width and height of the bar of g.
func rect(t *testing.T, g *node) (x, y, w, h int) {
	t.Helper()
	r := g.byClass("rect", "bar")
	if len(r) != 1 {
		t.Fatalf("operation %s has %d bars", g.attr["data-event"], len(r))
	}
	return atoi(t, r[0].attr["x"]), atoi(t, r[0].attr["y"]), atoi(t, r[0].attr["width"]), atoi(t, r[0].attr["height"])
}

// title returns the tooltip of n: the text of its title child.
func title(n *node) string {
	for _, k := range n.kids {
		if k.name == "title" {
			return k.text
		}
	}
	return ""
}

func TestHTMLTimelineSample(t *testing.T) {
	tl := sampleTimeline()
	s := page(t, timelineRun(tl))
	ps := plots(t, s)
	if len(ps) != 1 {
		t.Fatalf("page has %d timelines, want 1", len(ps))
	}
	p := ps[0]
	if n := len(p.svg.byClass("rect", "lane")); n != 3 {
		t.Errorf("plot has %d lanes, want 3", n)
	}
	var names []string
	for _, n := range p.lanes.byClass("text", "lane-name") {
		names = append(names, strings.TrimSpace(strings.TrimSuffix(n.text, title(n))))
	}
	if strings.Join(names, ",") != "p0,p1,▶ p2" {
		t.Errorf("lane names = %q, want p0, p1, and p2 marked as the highlighted operation's", names)
	}
	// One bar per operation, classed by how it ended, with its answer.
	want := map[string]struct{ class, answer string }{
		"2": {"ok", "✓ tok=1"}, "3": {"ok", "✓ absent"}, "4": {"lost", "? lost"}, "5": {"ok", "✓ tok=2"},
		"8": {"not-sent", "∅ not sent"}, "9": {"ok", "✓ v1 c1"}, "10": {"refused", "✗ FencedOut current=2"}, "11": {"pending", "… never returned"},
	}
	if len(p.bars) != len(want) {
		t.Errorf("plot has %d bars, want %d", len(p.bars), len(want))
	}
	bars := map[string]*node{}
	for _, g := range p.bars {
		id := g.attr["data-event"]
		bars[id] = g
		w, ok := want[id]
		if !ok {
			t.Errorf("a bar for event %s, which is a mark", id)
			continue
		}
		if !g.hasClass(w.class) {
			t.Errorf("bar %s has class %q, want %s", id, g.attr["class"], w.class)
		}
		if a := g.byClass("text", "answer"); len(a) != 1 || a[0].text != w.answer {
			t.Errorf("bar %s shows answer %v, want %q", id, a, w.answer)
		}
	}
	// Order on the clock is order on the page; the call that never
	// returned runs to the end, open.
	x := func(id string) (int, int) { x, _, w, _ := rect(t, bars[id]); return x, x + w }
	_, ret2 := x("2")
	call4, ret4 := x("4")
	call5, _ := x("5")
	if !(ret2 < call4 && call4 < call5 && call5 < ret4) {
		t.Errorf("bars out of clock order: #2 returns at %d, #4 spans %d–%d, #5 is called at %d", ret2, call4, ret4, call5)
	}
	if _, end := x("11"); end < p.width-8 || len(bars["11"].byClass("path", "edge")) != 1 {
		t.Errorf("the call that never returned ends at %d of %d, edge %d; want it open to the end", end, p.width, len(bars["11"].byClass("path", "edge")))
	}
	if n := len(bars["10"].byClass("path", "edge")); n != 0 {
		t.Errorf("a returned call has %d open edges", n)
	}
	// The highlighted operation: outlined, with an id the page links to,
	// and a band over its stretch of time.
	hl := p.svg.find(func(n *node) bool { return n.hasClass("hl") })
	if len(hl) != 1 || hl[0].attr["data-event"] != "9" || hl[0].attr["id"] != "tl-0-0-hl" {
		t.Fatalf("highlighted elements = %d (want one, event 9, id tl-0-0-hl)", len(hl))
	}
	if !strings.Contains(s, `<a href="#tl-0-0-hl">#9 load session/a</a>`) {
		t.Error("the page does not link to the highlighted operation")
	}
	if title(hl[0]) != "#9 p2/h3 [19,22] load Session/a → v1 c1 head=\"h\"\nthe operation the model disagrees with" {
		t.Errorf("the highlighted operation's tooltip = %q", title(hl[0]))
	}
	band := p.svg.byClass("rect", "band")
	hx, _, hw, _ := rect(t, hl[0])
	if len(band) != 1 || atoi(t, band[0].attr["x"]) > hx || atoi(t, band[0].attr["x"])+atoi(t, band[0].attr["width"]) < hx+hw {
		t.Error("no band covers the highlighted operation")
	}
	// Marks, one shape per kind; faults under their bars, by layer.
	var kinds []string
	for _, m := range p.marks {
		kinds = append(kinds, strings.TrimSpace(strings.TrimPrefix(m.attr["class"], "mark")))
	}
	if strings.Join(kinds, ",") != "open,open,kill,open,close" {
		t.Errorf("marks = %q, want open,open,kill,open,close", kinds)
	}
	shapes := map[string]bool{}
	for _, m := range p.marks {
		shapes[regexp.MustCompile(`[0-9.-]+`).ReplaceAllString(m.attr["d"], "")] = true
	}
	if len(shapes) != 3 {
		t.Errorf("open, kill and close marks draw %d distinct shapes, want 3", len(shapes))
	}
	faultOf := func(id string) string {
		f := bars[id].byClass("path", "fault")
		if len(f) != 1 {
			return fmt.Sprintf("%d faults", len(f))
		}
		return f[0].attr["class"] + ": " + title(f[0])
	}
	if got := faultOf("4"); got != "fault wrapper: fault wrapper/in-flight/kill" {
		t.Errorf("fault of #4 = %q", got)
	}
	if got := faultOf("11"); got != "fault instore: fault instore/commit-after-point/crash" {
		t.Errorf("fault of #11 = %q", got)
	}
	// The axis: clock values left to right, starting at the first call.
	ticks := p.svg.byClass("text", "tick")
	if len(ticks) < 3 || ticks[0].text != "1" {
		t.Fatalf("axis has %d labels, first %v", len(ticks), ticks)
	}
	for i := 1; i < len(ticks); i++ {
		a, b := atoi(t, ticks[i-1].text), atoi(t, ticks[i].text)
		if b <= a || atoi(t, ticks[i].attr["x"]) <= atoi(t, ticks[i-1].attr["x"]) {
			t.Errorf("axis labels %d then %d out of order", a, b)
		}
	}
	// Twelve operations fit a 1400 px page without scrolling.
	if p.width > tlFit {
		t.Errorf("a small timeline is %d px wide; want it to fit in %d", p.width, tlFit)
	}
	for _, banned := range []string{"<script", "<link", "src=", "@import", "url(", "<image", "<foreignObject", "xlink:href"} {
		if strings.Contains(s, banned) {
			t.Errorf("report.html is not self-contained: it holds %q", banned)
		}
	}
}

func TestHTMLTimelineLong(t *testing.T) {
	tl := busyTimeline(200, 4, 7)
	p := plots(t, page(t, timelineRun(tl)))[0]
	ops := 0
	for _, e := range tl.Events {
		if e.Mark == "" {
			ops++
		}
	}
	if len(p.bars) != ops || ops < 200 {
		t.Fatalf("plot has %d bars for %d operations", len(p.bars), ops)
	}
	if p.width <= tlFit || p.width > 40000 {
		t.Errorf("a 200-operation timeline is %d px wide; want it wider than the page, scrolling, and bounded", p.width)
	}
	// Every bar is wide enough to read, bars of one lane never overlap,
	// and what returned before another call is left of it.
	byID := map[string]timeline.Event{}
	for _, e := range tl.Events {
		byID[strconv.Itoa(e.ID)] = e
	}
	type span struct {
		e    timeline.Event
		x, w int
	}
	var spans []span
	for _, g := range p.bars {
		x, _, w, _ := rect(t, g)
		e := byID[g.attr["data-event"]]
		full := answerText(&e)
		a := g.byClass("text", "answer")
		if len(a) != 1 || a[0].text != full && (!strings.HasSuffix(a[0].text, "…") || utf8.RuneCountInString(a[0].text) < tlAnswerChars-2) {
			t.Errorf("bar %d (%d px) shows %v of its answer %q; want it whole or cut near %d characters", e.ID, w, a, full, tlAnswerChars)
		}
		spans = append(spans, span{e, x, w})
	}
	for _, a := range spans {
		for _, b := range spans {
			if a.e.Return != 0 && a.e.Return < b.e.Call && a.x+a.w >= b.x {
				t.Fatalf("#%d returns at %d before #%d is called at %d, but ends at x=%d past its start %d", a.e.ID, a.e.Return, b.e.ID, b.e.Call, a.x+a.w, b.x)
			}
		}
	}
	if hl := p.svg.find(func(n *node) bool { return n.hasClass("hl") }); len(hl) != 1 || hl[0].attr["data-event"] != strconv.Itoa(tl.Highlight) {
		t.Error("the long timeline does not outline its highlighted operation once")
	}
}

func TestHTMLTimelineHostile(t *testing.T) {
	tl := sampleTimeline()
	for i := range tl.Events {
		tl.Events[i].Label = hostile
		tl.Events[i].Answer += hostile[:60]
		tl.Events[i].Detail = hostile
	}
	tl.Events[2].Faults = []timeline.Fault{{Layer: hostile, Site: hostile, Kind: hostile}}
	tl.Lanes[1] = hostile
	s := page(t, timelineRun(tl))
	if strings.Contains(s, "<script") {
		i := strings.Index(s, "<script")
		t.Fatalf("report.html holds a raw <script: %.80q", s[i:])
	}
	assertNoControl(t, "report.html", s)
	if len(s) > 300<<10 {
		t.Errorf("report.html is %d bytes for a hostile timeline of 13 events; want it bounded", len(s))
	}
	p := plots(t, s)[0]
	if len(p.bars) != 8 || len(p.marks) != 5 {
		t.Fatalf("hostile text changed the picture: %d bars, %d marks", len(p.bars), len(p.marks))
	}
	texts := p.svg.find(func(n *node) bool { return n.name == "text" || n.name == "title" })
	texts = append(texts, p.lanes.find(func(n *node) bool { return n.name == "text" })...)
	sawMarkup := false
	for _, n := range texts {
		own := strings.TrimSuffix(n.text, title(n))
		if strings.Contains(n.text, "\u202e") || strings.ContainsAny(n.text, "\x00\x1b\r") {
			t.Errorf("%s %q holds a control character as itself", n.name, n.text)
		}
		if n.name == "title" && strings.Contains(n.text, `<script>alert(1)</script>`) {
			sawMarkup = true
		}
		limit := 200
		if n.name == "title" {
			limit = 3*timelineTitle + 200
		}
		if c := utf8.RuneCountInString(own); c > limit {
			t.Errorf("%s holds %d characters; want it cut", n.name, c)
		}
	}
	if !sawMarkup {
		t.Error("no tooltip shows the store's markup as text")
	}
	if !strings.Contains(s, `\u202e`) || !strings.Contains(s, `\x1b[31m`) {
		t.Error("the picture does not make control characters visible")
	}
	// A label cut to its room ends in an ellipsis.
	cut := 0
	for _, l := range p.svg.byClass("text", "label") {
		if strings.HasSuffix(l.text, "…") {
			cut++
		}
	}
	if cut == 0 {
		t.Error("no hostile label was cut to its room")
	}
}

func TestTimelineText(t *testing.T) {
	text := timelineText(sampleTimeline())
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 1+13+1 {
		t.Fatalf("text has %d lines, want a header, 13 events and the key:\n%s", len(lines), text)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^   #  lane  call–return  operation +answer +faults$`),
		regexp.MustCompile(`(?m)^   4  p0    9–12 +commit c1 tok=1 session/a +\? lost +!wrapper/in-flight/kill$`),
		regexp.MustCompile(`(?m)^▶  9  p2    19–22 +load session/a +✓ v1 c1$`),
		regexp.MustCompile(`(?m)^  11  p1    24–… +commit c3 tok=2 session/b +… never returned +!instore/commit-after-point/crash$`),
		regexp.MustCompile(`(?m)^   6  p0    14–15 +kill +✓ ok$`),
		regexp.MustCompile(`(?m)^▶ the operation the model disagrees with$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("text lacks a line matching %s:\n%s", want, text)
		}
	}
	// Columns line up: every answer starts under the header's.
	col := strings.Index(lines[0], "answer")
	for _, l := range lines[1:14] {
		r := []rune(l)
		head := utf8.RuneCountInString(lines[0][:col])
		if len(r) <= head || !strings.ContainsRune("✓✗?∅…", r[head]) {
			t.Errorf("no answer at column %d: %q", head, l)
		}
	}

	h := sampleTimeline()
	h.Events[3].Label = "a\nb\x1b[31m\u202e <x>"
	if got := timelineText(h); strings.Count(got, "\n") != len(lines) || !strings.Contains(got, `a\nb\x1b[31m\u202e <x>`) {
		t.Errorf("a label with control characters is not kept on one line, visible:\n%s", got)
	}
}

func TestTimelineCut(t *testing.T) {
	tl := busyTimeline(timelineMax+300, 3, 1)
	tl.Events = append(tl.Events, timeline.Event{ID: 99999, Lane: -1, Call: 5, Label: "nowhere"}, timeline.Event{ID: 99998, Lane: timelineLanes, Call: 6, Label: "too far"})
	v := viewOf(tl)
	if len(v.events) != timelineMax || v.before+v.after+len(v.events)+v.offLane != len(tl.Events) || v.offLane != 2 {
		t.Fatalf("view keeps %d events, cuts %d before, %d after and %d off lane, of %d", len(v.events), v.before, v.after, v.offLane, len(tl.Events))
	}
	if v.highlight < 0 || v.events[v.highlight].ID != tl.Highlight || v.before == 0 || v.after == 0 {
		t.Errorf("the view around highlight %d keeps %d before and %d after; want it centred on it", tl.Highlight, v.before, v.after)
	}
	text := timelineText(tl)
	if !strings.Contains(text, fmt.Sprintf("… %d earlier events not shown\n", v.before)) || !strings.Contains(text, "… 2 events on no lane shown") {
		t.Errorf("the text does not say what it cut:\n%.300s", text)
	}
	p := plots(t, page(t, timelineRun(tl)))[0]
	if n := len(p.bars) + len(p.marks); n != timelineMax {
		t.Errorf("the picture draws %d events, want %d", n, timelineMax)
	}

	// Lanes the timeline does not name are named by number; a return
	// before its call is drawn as a sliver, not a bar backwards.
	odd := &timeline.Timeline{Events: []timeline.Event{{ID: 0, Lane: 2, Call: 5, Return: 3, Label: "backwards", Answer: timeline.AnswerOK}}, Highlight: -1}
	v = viewOf(odd)
	if strings.Join(v.lanes, ",") != "lane 0,lane 1,lane 2" {
		t.Errorf("lanes = %q", v.lanes)
	}
	p = plots(t, page(t, timelineRun(odd)))[0]
	if _, _, w, _ := rect(t, p.bars[0]); len(p.bars) != 1 || w <= 0 {
		t.Errorf("a return before its call draws %d bars of width %d", len(p.bars), w)
	}
}

func TestTimelineJSON(t *testing.T) {
	for _, tl := range []*timeline.Timeline{sampleTimeline(), {Highlight: -1}, {Lanes: []string{"p0"}, Events: []timeline.Event{{Call: 1}}}} {
		f := Failure{Message: "m", Obligation: "ob:1", Timeline: tl}
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var back Failure
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, f) {
			t.Errorf("round trip changed the timeline:\n%s\ngot %+v", data, back.Timeline)
		}
		if !bytes.Contains(data, []byte(fmt.Sprintf(`"highlight":%d`, tl.Highlight))) {
			t.Errorf("highlight %d not written: %s", tl.Highlight, data)
		}
	}
	if data, _ := json.Marshal(Failure{}); bytes.Contains(data, []byte("timeline")) {
		t.Errorf("a failure without a timeline writes one: %s", data)
	}
}

func TestMarkdownAndJUnitTimeline(t *testing.T) {
	run := timelineRun(sampleTimeline())
	text := timelineText(sampleTimeline())
	md := markdown(t, run)
	if !strings.Contains(md, "**Timeline** (8 operations on 3 processes; 3 opens, 1 kill, 1 close; logical time 1 to 28)\n\n```\n"+text+"```\n") {
		t.Errorf("report.md lacks the timeline in a code block:\n%s", md)
	}
	var buf bytes.Buffer
	if err := writeJUnit(&buf, run); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.Contains(body, "  "+l+"\n") {
			t.Errorf("junit.xml lacks the timeline line %q", l)
		}
	}
	if !strings.Contains(body, "timeline: 8 operations on 3 processes") {
		t.Error("junit.xml lacks the timeline's summary")
	}
}

// TestTimelinePicturesForPeople writes pages with timelines into
// $CONFORM_TIMELINE_DIR, to look at in a browser; skipped without it.
func TestTimelinePicturesForPeople(t *testing.T) {
	dir := os.Getenv("CONFORM_TIMELINE_DIR")
	if dir == "" {
		t.Skip("set CONFORM_TIMELINE_DIR to write the pages")
	}
	hostileTL := sampleTimeline()
	for i := range hostileTL.Events {
		hostileTL.Events[i].Label = hostile[:120]
	}
	hostileTL.Lanes[1] = hostile[:40]
	run := timelineRun(sampleTimeline())
	f := run.Rows[0].Failures[0]
	for _, tl := range []*timeline.Timeline{busyTimeline(12, 3, 3), busyTimeline(150, 4, 5), hostileTL} {
		f.Timeline = tl
		run.Rows[0].Failures = append(run.Rows[0].Failures, f)
	}
	if err := os.WriteFile(filepath.Join(dir, "timelines.html"), []byte(page(t, run)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHTMLTimelineOpensAtHighlight(t *testing.T) {
	tl := busyTimeline(150, 3, 9)
	for _, c := range []struct {
		at    int // index of the highlighted event
		atEnd bool
	}{{len(tl.Events) - 3, true}, {2, false}, {len(tl.Events) / 2, false}} {
		tl.Highlight = tl.Events[c.at].ID
		ht := newHTMLTimeline(tl, "t")
		if ht.AtEnd != c.atEnd {
			t.Errorf("highlight at event %d of %d: AtEnd = %v, want %v", c.at, len(tl.Events), ht.AtEnd, c.atEnd)
		}
		s := page(t, timelineRun(tl))
		if got := strings.Contains(s, `class="tl-scroll at-end"`); got != c.atEnd {
			t.Errorf("highlight at event %d: page scrolls to the end %v, want %v", c.at, got, c.atEnd)
		}
	}
	if newHTMLTimeline(sampleTimeline(), "t").AtEnd {
		t.Error("a timeline that fits opens scrolled to its end")
	}
}

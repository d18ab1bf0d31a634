package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/timeline"
)

// The geometry of a timeline's picture, in CSS pixels. The lane names sit
// in a gutter of their own, outside the part that scrolls; the plot below
// an axis of logical time has one band per lane, each with a line of label
// text, the bar with its answer inside, and room under the bar for fault
// marks. A page 1400 px wide leaves about tlFit px beside the gutter.
const (
	tlGutter      = 76
	tlAxis        = 30
	tlLane        = 54
	tlLabelY      = 3 // top of the label's box, from the top of the lane
	tlBarY        = 21
	tlBarH        = 19
	tlAnswerY     = 14 // baseline of the answer, from the top of the bar
	tlPadL        = 12
	tlPadR        = 34 // room past the last tick for calls that never returned
	tlFit         = 1210
	tlMinGap      = 8.0  // least room between two clock values
	tlMarkW       = 16.0 // room for a mark, from its call to its return
	tlAnswerChars = 13   // a bar is made room for this much of its answer
	tlLabelChars  = 14   // and the stretch to the next call for this much of its label
	tlMaxStretch  = 4.0  // how much a short timeline may be stretched to fill the width
	tlMinShrink   = 0.65 // and how much one a little too wide may be shrunk to fit it
	tlCharW       = 6.7  // advance of one character of the 11 px monospace font
	tlTickGap     = 40   // least room between two labels of the axis
)

// The view of a timeline's picture. Coordinates are whole pixels; every
// string from the run has been through oneLine or fit.
type (
	htmlTimeline struct {
		ID                    string // prefix of the picture's element ids
		Summary, Note         string
		Width, Height, Gutter int
		LaneH, AxisY          int
		Lanes                 []htmlLane
		Ticks                 []htmlTick
		Bars                  []htmlBar
		Marks                 []htmlMark
		Band                  *htmlBand // the highlighted operation's stretch of time
		HighlightID           string    // element id of the highlighted operation
		HighlightName         string    // "#7 commit c3 tok=2"
		// AtEnd: the plot scrolls, and the highlighted operation is off its
		// first screen and on its last, so the plot opens scrolled to the end.
		AtEnd bool
		Aria  string
	}
	htmlLane struct {
		Y, TextY, Width int
		Name, Title     string
		Shade, Hl       bool
	}
	htmlTick struct {
		X     int
		Label string
	}
	htmlBar struct {
		ID, Class, Title, ElemID string
		Hl, Open                 bool
		X, Y, W, H               int
		OpenPath                 string // the outline of a bar with no end
		Label, Answer            string
		LabelX, LabelY, LabelW   int // the box the label is clipped to, 16 px high
		AnswerY                  int // baseline of the answer, inside the bar
		Faults                   []htmlMark
	}
	htmlMark struct {
		Class, Path, Title string
		ID                 string
		Hl                 bool
	}
	htmlBand struct {
		X, Y, W, H int
	}
)

// newHTMLTimeline returns the picture of t; id prefixes its element ids.
func newHTMLTimeline(t *timeline.Timeline, id string) *htmlTimeline {
	v := viewOf(t)
	ht := &htmlTimeline{ID: id, Summary: timelineSummary(v), Note: v.cutNote(), Gutter: tlGutter, LaneH: tlLane, AxisY: tlAxis}
	pos := layout(v.events)
	x := func(c int64) int { return pos[c] }
	right := tlPadL
	for _, p := range pos {
		right = max(right, p)
	}
	ht.Width = max(right+tlPadR, tlFit)
	end := ht.Width - 4 // where a call that never returned stops being drawn
	ht.Height = tlAxis + len(v.lanes)*tlLane + 4
	ht.Aria = "Timeline: " + ht.Summary
	for i, name := range v.lanes {
		// The shading runs past the plot, into the room a wider page
		// gives it.
		l := htmlLane{Y: tlAxis + i*tlLane, Name: fit(oneLine(name, 40), 9), Title: oneLine(name, timelineTitle), Shade: i%2 == 1, Width: ht.Width + 2000}
		l.TextY = l.Y + tlBarY + 14
		ht.Lanes = append(ht.Lanes, l)
	}
	// Label the axis at the clock values where something happened, left
	// to right, skipping those too close to the last label.
	clocks := make([]int64, 0, len(pos))
	for c := range pos {
		clocks = append(clocks, c)
	}
	sort.Slice(clocks, func(i, j int) bool { return clocks[i] < clocks[j] })
	lastTick := -tlTickGap
	for _, c := range clocks {
		if pos[c]-lastTick >= tlTickGap {
			ht.Ticks = append(ht.Ticks, htmlTick{X: pos[c], Label: strconv.FormatInt(c, 10)})
			lastTick = pos[c]
		}
	}
	// next[i] is where the label of event i must stop: the start of the
	// next event on its lane, or the end of the plot.
	next := make([]int, len(v.events))
	last := map[int]int{}
	for i := len(v.events) - 1; i >= 0; i-- {
		e := v.events[i]
		next[i] = ht.Width + 4
		if j, ok := last[e.Lane]; ok {
			next[i] = x(v.events[j].Call)
		}
		last[e.Lane] = i
	}
	for i := range v.events {
		e := &v.events[i]
		hl := i == v.highlight
		laneY := tlAxis + e.Lane*tlLane
		x1 := x(e.Call)
		// A call that never returned runs to the end, or to the next
		// event on its lane, if the lane goes on.
		x2 := min(end, next[i]-4)
		open := e.Return == 0
		if !open {
			x2 = x(e.Return)
		}
		if x2 < x1+4 {
			x2 = x1 + 4 // a return before its call, or at it: a sliver
		}
		title := eventTitle(e, v.lanes[e.Lane], hl)
		elemID := ""
		if hl {
			elemID = id + "-hl"
		}
		if e.Mark != "" {
			cx, cy := (x1+x2)/2, laneY+tlBarY+tlBarH/2
			if open {
				cx = x1 + int(tlMarkW/2)
			}
			ht.Marks = append(ht.Marks, htmlMark{Class: "mark " + markClass(e.Mark), Path: markPath(e.Mark, cx, cy), Title: title, ID: elemID, Hl: hl})
			continue
		}
		b := htmlBar{ID: strconv.Itoa(e.ID), Class: outcome(e), Title: title, ElemID: elemID, Hl: hl, Open: open,
			X: x1, Y: laneY + tlBarY, W: x2 - x1, H: tlBarH}
		if open {
			b.OpenPath = fmt.Sprintf("M%d %dH%dV%dH%d", x2, b.Y, x1, b.Y+b.H, x2)
		}
		b.LabelX, b.LabelY, b.LabelW = x1, laneY+tlLabelY, max(0, next[i]-x1-6)
		b.Label = fit(oneLine(e.Label, 200), int(float64(b.LabelW)/tlCharW))
		b.AnswerY = tlAnswerY
		b.Answer = fit(oneLine(answerText(e), 200), int(float64(b.W-6)/tlCharW))
		for _, f := range e.Faults {
			fx := (x1 + x2) / 2
			switch f.When {
			case timeline.FaultBefore:
				fx = x1
			case timeline.FaultAfter:
				fx = x2
			}
			b.Faults = append(b.Faults, htmlMark{Class: "fault " + faultClass(f.Layer), Path: faultPath(f.Layer, fx, b.Y+b.H),
				Title: oneLine("fault "+faultText(f), timelineTitle)})
		}
		ht.Bars = append(ht.Bars, b)
		if hl {
			ht.Band = &htmlBand{X: x1 - 4, Y: tlAxis - 6, W: x2 - x1 + 8, H: ht.Height - tlAxis + 6}
		}
	}
	if v.highlight >= 0 {
		e := v.events[v.highlight]
		ht.HighlightID = id + "-hl"
		ht.HighlightName = "#" + strconv.Itoa(e.ID) + " " + oneLine(nonEmpty(e.Label, e.Mark), timelineLabel)
		ht.Lanes[e.Lane].Hl = true
		if ht.Band == nil { // a mark: band its moment
			x1 := x(e.Call)
			ht.Band = &htmlBand{X: x1 - 8, Y: tlAxis - 6, W: 16, H: ht.Height - tlAxis + 6}
		}
		ht.AtEnd = ht.Band.X+ht.Band.W > tlFit && ht.Band.X > ht.Width-tlFit
	}
	return ht
}

// markClass returns the CSS class of a process mark.
func markClass(m string) string {
	switch m {
	case timeline.MarkOpen, timeline.MarkKill, timeline.MarkClose:
		return m
	}
	return "other"
}

// markPath draws a process mark centred on (x, y), one shape per kind: a
// cross for a kill, a ring for an open, a square for a close, a bar for
// anything else.
func markPath(m string, x, y int) string {
	switch m {
	case timeline.MarkKill:
		return fmt.Sprintf("M%d %dL%d %dM%d %dL%d %d", x-7, y-7, x+7, y+7, x+7, y-7, x-7, y+7)
	case timeline.MarkOpen:
		return fmt.Sprintf("M%d %da6 6 0 1 0 12 0a6 6 0 1 0-12 0", x-6, y)
	case timeline.MarkClose:
		return fmt.Sprintf("M%d %dh12v12h-12z", x-6, y-6)
	}
	return fmt.Sprintf("M%d %dv18", x, y-9)
}

// faultClass returns the CSS class of a fault's layer.
func faultClass(layer string) string {
	switch layer {
	case "wrapper", "instore":
		return layer
	}
	return "other"
}

// faultPath draws a fault mark hanging under a bar whose bottom edge is at
// y, at x: a triangle pointing up at the bar for the wrapper, a diamond for
// the store's own sites, a circle for any other layer.
func faultPath(layer string, x, y int) string {
	switch layer {
	case "wrapper":
		return fmt.Sprintf("M%d %dl6 10h-12z", x, y)
	case "instore":
		return fmt.Sprintf("M%d %dl6 6l-6 6l-6-6z", x, y)
	}
	return fmt.Sprintf("M%d %da5 5 0 1 0 10 0a5 5 0 1 0-10 0", x-5, y+6)
}

// layout returns the x of every clock value at which an event of evs was
// called or returned. Logical time orders events and says nothing of how
// long they took, so the spacing serves the reader: clock values follow
// one another at least tlMinGap apart, a bar is wide enough for its answer
// and the stretch from one call to the next on a lane for its label (each
// up to a bound), and a timeline narrower than tlFit is stretched to it,
// one a little wider shrunk to it; a longer one scrolls.
func layout(evs []timeline.Event) map[int64]int {
	type need struct {
		from int64
		w    float64
	}
	needs := map[int64][]need{} // clock value → what must lie before it
	seen := map[int64]bool{}
	var clocks []int64
	add := func(c int64) {
		if !seen[c] {
			seen[c] = true
			clocks = append(clocks, c)
		}
	}
	next := map[int]int64{} // lane → call of the event after, walking back
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		add(e.Call)
		if e.Return > e.Call {
			add(e.Return)
			w := tlMarkW
			if e.Mark == "" {
				w = textW(answerText(e), tlAnswerChars) + 10
			}
			needs[e.Return] = append(needs[e.Return], need{e.Call, w})
		}
		if n, ok := next[e.Lane]; ok && n > e.Call && e.Mark == "" {
			needs[n] = append(needs[n], need{e.Call, textW(e.Label, tlLabelChars) + 8})
		}
		next[e.Lane] = e.Call
	}
	sort.Slice(clocks, func(i, j int) bool { return clocks[i] < clocks[j] })
	at := make(map[int64]float64, len(clocks))
	for i, c := range clocks {
		p := 0.0
		if i > 0 {
			p = at[clocks[i-1]] + tlMinGap
		}
		for _, n := range needs[c] {
			p = math.Max(p, at[n.from]+n.w)
		}
		at[c] = p
	}
	span := 0.0
	if len(clocks) > 0 {
		span = at[clocks[len(clocks)-1]]
	}
	scale := 1.0
	switch room := float64(tlFit - tlPadL - tlPadR); {
	case span <= 0:
	case span < room:
		scale = math.Min(room/span, tlMaxStretch)
	case span*tlMinShrink <= room:
		scale = room / span
	}
	pos := make(map[int64]int, len(clocks))
	for _, c := range clocks {
		pos[c] = tlPadL + int(math.Round(at[c]*scale))
	}
	return pos
}

// textW returns the width of s in the picture's font, counting at most n
// characters.
func textW(s string, n int) float64 {
	return float64(min(utf8.RuneCountInString(s), n)) * tlCharW
}

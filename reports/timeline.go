package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/internal/timeline"
)

// Bounds of a timeline in the human-facing reports: at most timelineMax
// events, those around the highlighted one when there are more, on at most
// timelineLanes lanes; labels cut to timelineLabel characters in the text
// form and tooltips to timelineTitle.
const (
	timelineMax   = 400
	timelineLanes = 16
	timelineLabel = 64
	timelineTitle = 600
)

// timelineView is the part of a timeline the reports show: the events on
// a lane they draw, sorted by call, cut to timelineMax around the
// highlighted one, with the lane names and what was left out.
type timelineView struct {
	lanes          []string
	events         []timeline.Event
	highlight      int // index in events, or -1
	before, after  int // events cut before and after the window
	offLane, total int // events on no lane drawn; events in the timeline
}

// viewOf returns the part of t the reports show.
func viewOf(t *timeline.Timeline) timelineView {
	v := timelineView{highlight: -1, total: len(t.Events)}
	n := len(t.Lanes)
	var evs []timeline.Event
	for _, e := range t.Events {
		if e.Lane < 0 || e.Lane >= timelineLanes {
			v.offLane++
			continue
		}
		n = max(n, e.Lane+1)
		evs = append(evs, e)
	}
	n = min(n, timelineLanes)
	for i := range n {
		name := ""
		if i < len(t.Lanes) {
			name = t.Lanes[i]
		}
		v.lanes = append(v.lanes, nonEmpty(name, "lane "+strconv.Itoa(i)))
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Call < evs[j].Call })
	h := -1
	for i, e := range evs {
		if e.ID == t.Highlight {
			h = i
			break
		}
	}
	start := 0
	if len(evs) > timelineMax {
		if h >= 0 {
			start = min(max(h-timelineMax/2, 0), len(evs)-timelineMax)
		}
		v.before, v.after = start, len(evs)-start-timelineMax
		evs = evs[start : start+timelineMax]
	}
	v.events = evs
	if h >= start && h < start+len(evs) {
		v.highlight = h - start
	}
	return v
}

// cutNote says what of the timeline the reports leave out, or "".
func (v timelineView) cutNote() string {
	var parts []string
	if v.before > 0 {
		parts = append(parts, plural(v.before, "earlier event"))
	}
	if v.after > 0 {
		parts = append(parts, plural(v.after, "later event"))
	}
	if v.offLane > 0 {
		parts = append(parts, plural(v.offLane, "event")+" on no lane shown")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " not shown, of " + plural(v.total, "event")
}

// outcome is how an event ended, for drawing: one of ok, refused, lost,
// pending (never returned), not-sent.
func outcome(e *timeline.Event) string {
	switch {
	case e.Answer == timeline.AnswerLost:
		return "lost"
	case e.Answer == timeline.AnswerNotSent:
		return "not-sent"
	case e.Return == 0 || e.Answer == "":
		return "pending"
	case e.Answer == timeline.AnswerOK:
		return "ok"
	}
	return "refused"
}

// answerText is the answer as the picture and the text form show it: a
// symbol, so that no answer is told by colour alone, and a word or the
// result.
func answerText(e *timeline.Event) string {
	switch outcome(e) {
	case "ok":
		if e.Result != "" {
			return "✓ " + e.Result
		}
		return "✓ ok"
	case "lost":
		return "? lost"
	case "not-sent":
		return "∅ not sent"
	case "pending":
		if e.Answer != "" {
			return "… " + e.Answer
		}
		return "… never returned"
	}
	return strings.TrimSpace("✗ " + e.Answer + " " + e.Result)
}

// clockText is the event's interval on the clock: "3–4", "3–…" when it
// never returned.
func clockText(e *timeline.Event) string {
	ret := "…"
	if e.Return != 0 {
		ret = strconv.FormatInt(e.Return, 10)
	}
	return strconv.FormatInt(e.Call, 10) + "–" + ret
}

// faultText is one fault on one line: layer/site/kind.
func faultText(f timeline.Fault) string {
	return strings.Join([]string{nonEmpty(f.Layer, "?"), nonEmpty(f.Site, "?"), nonEmpty(f.Kind, "?")}, "/")
}

// title is the whole event for a tooltip, cut to timelineTitle characters.
func eventTitle(e *timeline.Event, lane string, highlight bool) string {
	s := e.Detail
	if s == "" {
		s = fmt.Sprintf("#%d %s [%s] %s → %s", e.ID, lane, clockText(e), e.Label, strings.TrimSpace(e.Answer+" "+e.Result))
	}
	s = oneLine(s, timelineTitle)
	var extra []string
	for _, f := range e.Faults {
		extra = append(extra, "fault "+oneLine(faultText(f), timelineLabel))
	}
	if highlight {
		extra = append(extra, "the operation the model disagrees with")
	}
	if len(extra) > 0 {
		s += "\n" + strings.Join(extra, "\n")
	}
	return s
}

// oneLine returns s on one line (textsafe.Line: every control character,
// newlines and bidirectional controls included, made visible) cut to at
// most n characters, an ellipsis marking a cut.
func oneLine(s string, n int) string {
	if len(s) > 4*n {
		s = s[:4*n] // at least n whole characters precede a split one
	}
	s = textsafe.Line(s)
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// fit returns s cut to at most n characters, an ellipsis marking a cut, or
// "" when not even one character and the ellipsis fit.
func fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 2 {
		return ""
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return strings.TrimRight(s[:i], " ") + "…"
		}
		count++
	}
	return s
}

// timelineText returns the timeline one event a line, for the Markdown
// and JUnit reports: the event's number, its lane, its interval on the
// clock, its label, its answer and its faults, a ▶ before the event the
// model disagrees with. Store text is cut and made visible on one line.
func timelineText(t *timeline.Timeline) string {
	v := viewOf(t)
	type line struct{ mark, id, lane, clock, label, answer, faults string }
	rows := []line{{" ", "#", "lane", "call–return", "operation", "answer", "faults"}}
	for i := range v.events {
		e := &v.events[i]
		l := line{mark: " ", id: strconv.Itoa(e.ID), lane: oneLine(v.lanes[e.Lane], 12), clock: clockText(e),
			label: oneLine(e.Label, timelineLabel), answer: oneLine(answerText(e), timelineLabel)}
		if e.Mark != "" {
			l.label = oneLine(nonEmpty(e.Label, e.Mark), timelineLabel)
		}
		if i == v.highlight {
			l.mark = "▶"
		}
		var fs []string
		for _, f := range e.Faults {
			fs = append(fs, "!"+oneLine(faultText(f), timelineLabel))
		}
		l.faults = strings.Join(fs, " ")
		rows = append(rows, l)
	}
	var w [6]int
	for _, r := range rows {
		for k, s := range []string{r.id, r.lane, r.clock, r.label, r.answer} {
			w[k] = max(w[k], utf8.RuneCountInString(s))
		}
	}
	pad := func(s string, n int, right bool) string {
		p := strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
		if right {
			return p + s
		}
		return s + p
	}
	var b strings.Builder
	if v.before > 0 {
		fmt.Fprintf(&b, "… %s not shown\n", plural(v.before, "earlier event"))
	}
	for _, r := range rows {
		s := r.mark + " " + pad(r.id, w[0], true) + "  " + pad(r.lane, w[1], false) + "  " + pad(r.clock, w[2], false) +
			"  " + pad(r.label, w[3], false) + "  " + pad(r.answer, w[4], false) + "  " + r.faults
		b.WriteString(strings.TrimRight(s, " "))
		b.WriteByte('\n')
	}
	if v.after > 0 {
		fmt.Fprintf(&b, "… %s not shown\n", plural(v.after, "later event"))
	}
	if v.offLane > 0 {
		fmt.Fprintf(&b, "… %s on no lane shown\n", plural(v.offLane, "event"))
	}
	if v.highlight >= 0 {
		b.WriteString("▶ the operation the model disagrees with\n")
	}
	return b.String()
}

// timelineSummary says in one line what the view of a timeline holds: how
// many operations on how many processes, how many opens, kills and closes,
// over which stretch of the clock.
func timelineSummary(v timelineView) string {
	ops := 0
	marks := map[string]int{}
	var lo, hi int64
	for i, e := range v.events {
		if e.Mark != "" {
			marks[e.Mark]++
		} else {
			ops++
		}
		if i == 0 || e.Call < lo {
			lo = e.Call
		}
		hi = max(hi, e.Call, e.Return)
	}
	procs := "1 process"
	if len(v.lanes) != 1 {
		procs = strconv.Itoa(len(v.lanes)) + " processes"
	}
	s := plural(ops, "operation") + " on " + procs
	var ms []string
	for _, m := range []string{timeline.MarkOpen, timeline.MarkKill, timeline.MarkClose} {
		if marks[m] > 0 {
			ms = append(ms, plural(marks[m], m))
		}
	}
	if len(ms) > 0 {
		s += "; " + strings.Join(ms, ", ")
	}
	if len(v.events) > 0 {
		s += fmt.Sprintf("; logical time %d to %d", lo, hi)
	}
	return s
}

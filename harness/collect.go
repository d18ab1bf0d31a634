package harness

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// collect turns Ginkgo's report into the report model: one row per chapter
// row, in chapter order, each aggregating its specs.
func (s *suite) collect(r Report) *reports.Run {
	o := s.opts
	start := s.start
	if start.IsZero() {
		start = r.StartTime
	}
	run := &reports.Run{
		Schema:      reports.SchemaVersion,
		Tool:        "conform",
		Version:     Version,
		Store:       o.Store,
		Seed:        o.Seed,
		Start:       start,
		Duration:    time.Since(start),
		Failpoints:  sortedCopy(o.Failpoints),
		LabelFilter: r.SuiteConfig.LabelFilter,
		Obligations: catalogue(chapters()),

		WithoutInStoreFaults: o.WithoutInStoreFaults,
		Shard:                shardOf(o),
		Explore:              exploration(r),
	}
	s.mu.Lock()
	run.Warnings = append([]string(nil), s.warnings...)
	s.mu.Unlock()
	sel, err := selection(r.SuiteConfig.LabelFilter, activeChapters(o))
	if err != nil {
		sel = nil // Ginkgo ran with it, so it parses; select nothing rather than guess
	}
	for _, reason := range r.SpecialSuiteFailureReasons {
		if strings.Contains(reason, "Interrupted") {
			run.Interrupted = true
		}
	}
	byRow := map[reports.RowID]bool{}
	for _, ch := range chapters() {
		for _, row := range ch.Rows() {
			byRow[row.ID] = true
			run.Rows = append(run.Rows, reports.Row{
				Chapter:     ch.ID,
				ID:          row.ID,
				Name:        row.Name,
				Spec:        ch.Title + ": " + row.Name,
				Labels:      []string{ch.ID.Label(), row.ID.Label()},
				Obligations: row.Obligations,
				Status:      reports.StatusNotRun,
				Repro:       ReproLine(Repro{Seed: o.Seed, Row: string(row.ID), Failpoints: o.Failpoints, Store: o.Store, Fences: o.Fences}),
				NotSelected: !sel[row.ID],
			})
		}
	}
	agg := map[reports.RowID][]SpecReport{}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			if sr.State.Is(types.SpecStateFailureStates) {
				// A chapter-level node failed (BeforeAll, a reporter): every row of it carries it.
				for _, row := range run.Rows {
					if ch := chapterOf(sr.Labels()); ch == "" || ch == row.Chapter {
						agg[row.ID] = append(agg[row.ID], sr)
					}
				}
			}
			continue
		}
		id := rowOf(sr.Labels())
		if byRow[id] {
			agg[id] = append(agg[id], sr)
		}
	}
	for i := range run.Rows {
		row := &run.Rows[i]
		aggregate(row, agg[row.ID], run.Interrupted)
		if len(o.Failpoints) > 0 {
			for j := range row.Failures {
				row.Failures[j].Message += " (" + userFailpointNote("this failure", o.Failpoints) + ")"
			}
		}
	}
	return run
}

// userFailpointNote returns what every finding of a run with failpoints of
// the user's says, about subject ("this failure"): the rows account for
// the faults they inject themselves, not for those, so a correct store
// can fail under them.
func userFailpointNote(subject string, fps []string) string {
	return subject + " followed a failpoint armed by the user, --failpoint " + strings.Join(fps, " --failpoint ") +
		": the rows do not account for it, and a commit it crashes has an unknown outcome where the row expects an acknowledged one; run without it to judge the store alone"
}

func chapterOf(labels []string) reports.ChapterID {
	for _, l := range labels {
		if id, ok := strings.CutPrefix(l, "chapter:"); ok {
			return reports.ChapterID(id)
		}
	}
	return ""
}

func rowOf(labels []string) reports.RowID {
	for _, l := range labels {
		if id, ok := strings.CutPrefix(l, "row:"); ok {
			return reports.RowID(id)
		}
	}
	return ""
}

// aggregate sets a row's status from its specs: failed if any failed;
// not run if a spec was not run because the store could not serve it
// (with why); passed if any passed (with the parts not exercised listed);
// not exercised if specs ran but none could reach what it checks; else
// not run.
func aggregate(row *reports.Row, specs []SpecReport, interrupted bool) {
	var passed, failed, notEx bool
	var notRun []string
	inStore := 0
	for _, sr := range specs {
		row.Duration += sr.RunTime
		st := specStatus(sr)
		text := sr.LeafNodeText
		if text == "" {
			text = sr.LeafNodeType.String()
		}
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case chapter.EntryNotExercised, chapter.EntryNothingExercised:
				row.NotExercised = append(row.NotExercised, text+": "+e.StringRepresentation())
			case chapter.EntryInStoreGap:
				inStore++
			case chapter.EntryNotRun:
				if why := e.StringRepresentation(); len(notRun) == 0 || notRun[len(notRun)-1] != why {
					notRun = append(notRun, why)
				}
			}
		}
		switch st {
		case reports.StatusPassed:
			passed = true
		case reports.StatusNotExercised:
			notEx = true
		case reports.StatusFailed:
			failed = true
			row.Failures = append(row.Failures, failuresOf(sr, text)...)
			if r := entry(sr, chapter.EntryRepro); r != "" {
				row.Repro = r
			}
		}
		if sr.CapturedGinkgoWriterOutput != "" {
			row.Output += textsafe.Clip(sr.CapturedGinkgoWriterOutput, 4096)
		}
	}
	row.InStoreOnly = inStore > 0 && inStore == len(row.NotExercised)
	switch {
	case failed:
		row.Status = reports.StatusFailed
	case len(notRun) > 0:
		row.Status = reports.StatusNotRun
		row.NotExercised = append(notRun, row.NotExercised...)
	case passed:
		row.Status = reports.StatusPassed
	case notEx:
		row.Status = reports.StatusNotExercised
	default:
		row.Status = reports.StatusNotRun
		if interrupted {
			row.NotExercised = append(row.NotExercised, "the run was interrupted before this row")
		}
	}
	if row.Status != reports.StatusFailed {
		row.Repro = ""
	}
}

// specStatus maps one spec's Ginkgo state onto the report's statuses.
func specStatus(sr SpecReport) reports.Status {
	switch {
	case sr.State == types.SpecStatePassed:
		return reports.StatusPassed
	case sr.State == types.SpecStateInterrupted || sr.State == types.SpecStateAborted && sr.Failure.Message == "":
		return reports.StatusNotRun
	case sr.State.Is(types.SpecStateFailureStates):
		return reports.StatusFailed
	case hasEntry(sr, chapter.EntryNothingExercised):
		return reports.StatusNotExercised
	}
	return reports.StatusNotRun
}

func hasEntry(sr SpecReport, name string) bool {
	for _, e := range sr.ReportEntries {
		if e.Name == name {
			return true
		}
	}
	return false
}

// entry returns the text of the spec's first report entry named name, or "".
func entry(sr SpecReport, name string) string {
	for _, e := range sr.ReportEntries {
		if e.Name == name {
			return e.StringRepresentation()
		}
	}
	return ""
}

// failuresOf builds the report's failures from the spec: the structured
// ones the row recorded (a spec records one, the exploration chapter's
// one per failed history), or, for a failure the row did not describe (a
// timeout, a panic in the harness), Ginkgo's own message.
func failuresOf(sr SpecReport, text string) []reports.Failure {
	var out []reports.Failure
	for _, e := range sr.ReportEntries {
		if e.Name != chapter.EntryFailure {
			continue
		}
		var f reports.Failure
		if err := json.Unmarshal([]byte(e.StringRepresentation()), &f); err == nil {
			f.Message = text + ": " + f.Message
			f.Location = sr.Failure.Location.String()
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out
	}
	return []reports.Failure{failureOf(sr, text)}
}

// failureOf builds the report's failure from Ginkgo's own message.
func failureOf(sr SpecReport, text string) reports.Failure {
	msg := sr.Failure.Message
	if sr.State == types.SpecStateTimedout {
		msg = "the spec exceeded its time bound: " + msg
	}
	if sr.State == types.SpecStatePanicked {
		msg = "the spec panicked: " + msg + "\n" + sr.Failure.ForwardedPanic
	}
	return reports.Failure{Message: text + ": " + msg, Obligation: chapter.ObErrors, Location: sr.Failure.Location.String()}
}

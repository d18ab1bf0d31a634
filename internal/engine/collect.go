package engine

import (
	"strings"
	"time"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/spec"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// collect turns the specs' results into the report model: one row per
// chapter row, in chapter order, each aggregating its specs. filter is the
// label filter the run selected with; interrupted says the run was.
func (s *suite) collect(specs []*spec.Result, filter string, interrupted bool) *reports.Run {
	o := s.opts
	start := s.start
	run := &reports.Run{
		Schema:      reports.SchemaVersion,
		Tool:        "conform",
		Version:     Version,
		Store:       o.Store,
		Seed:        o.Seed,
		Start:       start,
		Duration:    time.Since(start),
		Failpoints:  sortedCopy(o.Failpoints),
		LabelFilter: filter,
		Obligations: catalogue(chaptersOf(o.Options)),

		WithoutInStoreFaults: o.WithoutInStoreFaults,
		Shard:                shardOf(o.Options),
		Explore:              exploration(specs),
		Interrupted:          interrupted,
	}
	s.mu.Lock()
	run.Warnings = append([]string(nil), s.warnings...)
	s.mu.Unlock()
	sel, err := selection(filter, activeChapters(o.Options))
	if err != nil {
		sel = nil // the run ran with it, so it parses; select nothing rather than guess
	}
	byRow := map[reports.RowID]bool{}
	for _, ch := range chaptersOf(o.Options) {
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
				Repro:       o.Repro(row.ID),
				NotSelected: !sel[row.ID],
			})
		}
	}
	agg := map[reports.RowID][]*spec.Result{}
	for _, sr := range specs {
		if sr.Node != "" {
			if sr.State.Failure() {
				// A node of no row failed (a BeforeSuite, a reporter): every row of its chapter carries it.
				for _, row := range run.Rows {
					if ch := chapterOf(sr.Labels); ch == "" || ch == row.Chapter {
						agg[row.ID] = append(agg[row.ID], sr)
					}
				}
			}
			continue
		}
		id := rowOf(sr.Labels)
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
func aggregate(row *reports.Row, specs []*spec.Result, interrupted bool) {
	var passed, failed, notEx bool
	var notRun []string
	inStore := 0
	for _, sr := range specs {
		row.Duration += sr.Duration
		st := specStatus(sr)
		text := sr.Text
		if text == "" {
			text = sr.Node
		}
		for _, part := range sr.NotExercised {
			row.NotExercised = append(row.NotExercised, text+": "+part)
		}
		inStore += sr.InStoreGaps
		for _, why := range sr.NotRun {
			if len(notRun) == 0 || notRun[len(notRun)-1] != why {
				notRun = append(notRun, why)
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
			if sr.Repro != "" {
				row.Repro = sr.Repro
			}
		}
		if sr.Output != "" {
			row.Output += textsafe.Clip(sr.Output, 4096)
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

// specStatus maps one spec's state onto the report's statuses.
func specStatus(sr *spec.Result) reports.Status {
	switch {
	case sr.State == spec.Passed:
		return reports.StatusPassed
	case sr.State == spec.Interrupted:
		return reports.StatusNotRun
	case sr.State.Failure():
		return reports.StatusFailed
	case sr.Nothing:
		return reports.StatusNotExercised
	}
	return reports.StatusNotRun
}

// failuresOf builds the report's failures from the spec: the structured
// ones the row recorded (a spec records one, the exploration chapter's
// one per failed history), or, for a failure the row did not describe (a
// timeout, a panic in the harness), the runner's own message.
func failuresOf(sr *spec.Result, text string) []reports.Failure {
	var out []reports.Failure
	for _, f := range sr.Failures {
		f.Message = text + ": " + f.Message
		f.Location = sr.Location
		out = append(out, f)
	}
	if len(out) > 0 {
		return out
	}
	return []reports.Failure{failureOf(sr, text)}
}

// failureOf builds the report's failure from the runner's own message.
func failureOf(sr *spec.Result, text string) reports.Failure {
	msg := sr.Message
	if sr.State == spec.TimedOut {
		msg = "the spec exceeded its time bound: " + msg
	}
	if sr.State == spec.Panicked {
		msg = "the spec panicked: " + msg + "\n" + sr.Panic
	}
	return reports.Failure{Message: text + ": " + msg, Obligation: chapter.ObErrors, Location: sr.Location}
}

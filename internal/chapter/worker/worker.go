// Package worker is the durable-worker chapter: a worker (over package
// writer) takes jobs from Record scopes and commits each step's progress,
// and is killed at chosen points (engine: package scripted).
package worker

import (
	"context"

	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/scripted"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// ID is the durable-worker chapter's name and label.
const ID reports.ChapterID = "worker"

// Title is the chapter's title in the reports.
const Title = "Durable-worker chapter"

// jobs is how many jobs a spec's worker takes.
const jobs = 3

// Chapter returns the durable-worker chapter, over one host-store realm.
func Chapter() chapter.Chapter {
	return chapter.Chapter{ID: ID, Title: Title, Rows: Rows}
}

// Rows returns the chapter's rows: the worker undisturbed, then one row
// per chosen point, each hit at the first step of the first job (nothing
// committed yet) and at the last step of a later job. After every restart
// the row checks each job's committed state against the reference (no step
// lost after its commit landed, none committed twice, no committed step
// run again), that no garbage chunk survived the open, and, all along,
// the writer rules; at the end every job has finished exactly once.
func Rows() []*chapter.Row { return RowsWith(writer.Unsafe{}) }

// RowsWith returns Rows with a writer that breaks the rules unsafe names;
// the chapters' own tests use it to show that the rows catch a writer
// that breaks them.
func RowsWith(unsafe writer.Unsafe) []*chapter.Row {
	base := &chapter.Row{ID: "worker-undisturbed", Name: "Durable worker: undisturbed", Obligations: []reports.ObligationID{chapter.ObRun, chapter.ObWriter}}
	base.Specs = func(s *chapter.Specs) {
		s.It("a worker finishes every job once, as the reference does", base.Obligations, func(ctx context.Context, e *chapter.Env) {
			play(ctx, e, scripted.Fault{End: scripted.Completes}, 0, 0, unsafe)
		})
	}
	rows := []*chapter.Row{base}
	for _, f := range stepFaults() {
		r := &chapter.Row{ID: reports.RowID("worker-" + f.ID), Name: "Durable worker: " + f.Name, Obligations: f.Obligations}
		r.Specs = func(s *chapter.Specs) {
			first, later := "at the first step of the first job (nothing committed before it)", "at the last step of job 2"
			firstStep := 1
			if f.ID == "between-jobs" {
				first, later = "after the first job finished", "after job 2 finished"
				firstStep = -1 // the point comes after the job's last step
			}
			s.It(first+": every job finishes exactly once in the committed state", f.Obligations, func(ctx context.Context, e *chapter.Env) {
				play(ctx, e, f, 1, firstStep, unsafe)
			})
			s.It(later+": every job finishes exactly once in the committed state", f.Obligations, func(ctx context.Context, e *chapter.Env) {
				play(ctx, e, f, 2, -1, unsafe)
			})
		}
		rows = append(rows, r)
	}
	return rows
}

// The chosen points of a worker's job.
const (
	beforeStep  scripted.Point = iota // before a step's check
	afterStep                         // the step's tool call returned
	afterCommit                       // the step's commit landed
	betweenJobs                       // a job finished; the next not started
)

// stepFaults returns the chosen points of the work and what happens there.
func stepFaults() []scripted.Fault {
	killObs := []reports.ObligationID{chapter.ObRun, chapter.ObDurable, chapter.ObAllOrNothing, chapter.ObWriter}
	return []scripted.Fault{
		{ID: "before-step", Name: "killed before a step", What: "killed before a step", Obligations: killObs, Arm: scripted.KillAt(beforeStep)},
		{ID: "after-step", Name: "killed after a step", What: "killed after a step ran, before its commit", Obligations: killObs, Arm: scripted.KillAt(afterStep)},
		{ID: "commit-held", Name: "killed with the commit held in the store", What: "killed with the step's commit held inside the store", Obligations: killObs, Site: instore.CommitBeforePoint, Arm: scripted.HeldInStore},
		{ID: "answer-lost", Name: "killed with the commit's answer lost", What: "killed after the step's commit landed, its answer lost", Obligations: append(killObs, chapter.ObRetry), Arm: scripted.AnswerLost},
		{ID: "after-landed", Name: "killed after the commit landed", What: "killed after the step's commit landed", Obligations: killObs, Arm: scripted.KillAt(afterCommit)},
		{ID: "between-jobs", Name: "killed between jobs", What: "killed after the job finished, before the next", Obligations: killObs, Arm: scripted.KillAt(betweenJobs)},
		{ID: "takeover", Name: "taken over by another process", What: "taken over by another worker before a step", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObFencing, chapter.ObRun}, End: scripted.Stopped, Arm: scripted.Takeover(beforeStep)},
		{ID: "paused", Name: "paused past the self-fence window", What: "paused past its self-fence window before a step", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObRun}, End: scripted.Completes, Arm: scripted.Pause(beforeStep)},
	}
}

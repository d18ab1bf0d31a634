// Package longrun is the long-run chapter: a scripted run of a writer
// (package writer) over the store, round after round of a fake model call
// and fake tool calls, faulted at each chosen point of a round in turn
// (engine: package scripted).
package longrun

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/scripted"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// ID is the long-run chapter's name and label.
const ID reports.ChapterID = "long-run"

// Title is the chapter's title in the reports.
const Title = "Long-run chapter"

// The shape of the chapter's scripted run.
const (
	rounds     = 5 // rounds in a run
	laterRound = 3 // the round a fault hits after rounds were committed
)

// Chapter returns the long-run chapter, over one host-store realm.
func Chapter() chapter.Chapter {
	return chapter.Chapter{ID: ID, Title: Title, Rows: Rows}
}

// Rows returns the chapter's rows: the run undisturbed, then one row per
// chosen point of a round, each hit in round 1 (nothing committed yet) and
// in a later round. After every restart the row checks that the transcript
// so far equals the reference's (no round lost after its commit landed,
// none committed twice), that the run id is the same when a commit had
// landed and new when none had, and that no garbage chunk survived the
// open; and, all along, that the writer kept the writer rules (the
// observer).
func Rows() []*chapter.Row { return RowsWith(writer.Unsafe{}) }

// RowsWith returns Rows with a writer that breaks the rules unsafe names;
// the chapters' own tests use it to show that the rows catch a writer
// that breaks them.
func RowsWith(unsafe writer.Unsafe) []*chapter.Row {
	base := &chapter.Row{ID: "long-run-undisturbed", Name: "Long run: undisturbed", Obligations: []reports.ObligationID{chapter.ObRun, chapter.ObWriter}}
	base.Specs = func(s *chapter.Specs) {
		s.It("a scripted run of many rounds commits the reference's transcript, and a new process finds it whole", base.Obligations, func(ctx context.Context, e *chapter.Env) {
			play(ctx, e, scripted.Fault{End: scripted.Completes}, 0, unsafe)
		})
	}
	rows := []*chapter.Row{base}
	for _, f := range roundFaults() {
		r := &chapter.Row{ID: reports.RowID("long-run-" + f.ID), Name: "Long run: " + f.Name, Obligations: f.Obligations}
		r.Specs = func(s *chapter.Specs) {
			for _, k := range []int{1, laterRound} {
				when := fmt.Sprintf("in round %d", k)
				if k == 1 {
					when += " (nothing committed before it)"
				}
				text := when + ": each restart continues the run under its run id, or runs the input again as a new run when nothing was committed, and the transcript equals the reference's"
				s.It(text, f.Obligations, func(ctx context.Context, e *chapter.Env) { play(ctx, e, f, k, unsafe) })
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// The chosen points of a round.
const (
	beforeModel scripted.Point = iota // before the model call's check
	afterModel                        // the model call returned
	beforeTool                        // right before a tool call's check
	afterTool                         // a tool call returned
	afterCommit                       // the round's commit landed
)

// roundFaults returns the chosen points of a round and what happens there.
func roundFaults() []scripted.Fault {
	killObs := []reports.ObligationID{chapter.ObRun, chapter.ObDurable, chapter.ObAllOrNothing, chapter.ObWriter}
	return []scripted.Fault{
		{ID: "before-model", Name: "killed before the model call", What: "killed before the model call", Obligations: killObs, Arm: scripted.KillAt(beforeModel)},
		{ID: "after-model", Name: "killed after the model call", What: "killed after the model call returned", Obligations: killObs, Arm: scripted.KillAt(afterModel)},
		{ID: "before-tool", Name: "killed before a tool call", What: "killed right before a tool call starts", Obligations: killObs, Arm: scripted.KillAt(beforeTool)},
		{ID: "after-tool", Name: "killed after a tool call", What: "killed after a tool call returned", Obligations: killObs, Arm: scripted.KillAt(afterTool)},
		{ID: "commit-held", Name: "killed with the commit held in the store", What: "killed with the round's commit held inside the store", Obligations: killObs, Site: instore.CommitBeforePoint, Arm: scripted.HeldInStore},
		{ID: "answer-lost", Name: "killed with the commit's answer lost", What: "killed after the round's commit landed, its answer lost", Obligations: append(killObs, chapter.ObRetry), Arm: scripted.AnswerLost},
		{ID: "after-landed", Name: "killed after the commit landed", What: "killed after the round's commit landed", Obligations: killObs, Arm: scripted.KillAt(afterCommit)},
		{ID: "takeover", Name: "taken over by another process", What: "taken over by another process before a tool call", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObFencing, chapter.ObRun}, End: scripted.Stopped, Arm: scripted.Takeover(beforeTool)},
		{ID: "renew-failed", Name: "a renew fails", What: "a renew failing mid-round", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObRun}, End: scripted.Completes, Arm: scripted.RenewFails(afterModel)},
		{ID: "paused", Name: "paused past the self-fence window", What: "paused past its self-fence window before a tool call", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObRun}, End: scripted.Completes, Arm: scripted.Pause(beforeTool)},
		{ID: "indeterminate", Name: "the commit's answer is Indeterminate", What: "the round's commit answered Indeterminate after it landed, the process alive", Obligations: []reports.ObligationID{chapter.ObWriter, chapter.ObRetry, chapter.ObRun}, End: scripted.Completes, Arm: scripted.Indeterminate},
	}
}

// play is one spec: the run, faulted by f in round k, then restarted until
// it finished, then opened once more.
func play(ctx context.Context, e *chapter.Env, f scripted.Fault, k int, unsafe writer.Unsafe) {
	scripted.Play(ctx, e, f, fmt.Sprintf("k%d", k), unsafe, func(l *scripted.Lab) (scripted.Work, scripted.Pos) {
		sc := &script{seed: e.Rand().Uint64(), rounds: rounds, unit: l.Timing.RenewInterval() / 5, mem: 1200, out: 1600}
		w := &work{l: l, sc: sc, ref: sc.reference()}
		w.texts = scripted.Texts{
			Held:      fmt.Sprintf("round %d's commit", k),
			Where:     fmt.Sprintf(" in round %d", k),
			Proc:      "process",
			Writer:    "writer",
			Work:      "run",
			Whole:     "the run",
			Finished:  "the run finished",
			Target:    fmt.Sprintf("%d rounds", rounds),
			NotFound:  "a new process does not find the finished run",
			FoundWant: fmt.Sprintf("round %d", rounds),
			Clock:     "of run time on the clock",
			Wait:      fmt.Sprintf("waits before a tool call of round %d; another process takes over and runs on", k),
			GoOn:      "its tool call",
		}
		return w, scripted.Pos{Step: k}
	})
}

package reports

import (
	"strings"
	"time"

	"github.com/conform-spi/conform/internal/timeline"
)

// catalogue is the obligation catalogue the fixtures use.
func catalogue() []Obligation {
	return []Obligation{
		{"ob:1", "All or nothing", "A load shows a batch completely, in every scope it touches, or not at all.", ""},
		{"ob:2", "Durable once acknowledged", "After commit answers Ok, the batch survives a writer crash.", ""},
		{"ob:3", "Idempotent retry", "A commit id sent twice acts once.", ""},
		{"ob:4", "One version chain per scope", "If two exist anyway, every load must resolve them the same way.", ""},
		{"ob:5", "Fencing", "After a token is acquired, a batch carrying a lower token whose commit point comes later never becomes visible.", ""},
		{"ob:6", "Logical removal", "Truncate, drop and delete take effect for loads together with their batch.", ""},
		{"ob:7", "Order", "Rows load in commit order.", ""},
		{"ob:8", "Independence", "No realm-wide lock, pointer, sequence or transaction on the commit path.", ""},
		{"ob:9", "Listing", "A scope is listed once its creating batch is visible, and not after its deletion.", ""},
		{"ob:fence", "Fence leases", "The store records a lease for the holder of the highest token.", ""},
		{"ob:errors", "Error contract", "Answer Unavailable only when nothing was applied.", ""},
	}
}

// sampleRun is a failing run with every status, two chapters and every
// field set, so that a JSON round trip can compare it whole.
func sampleRun() *Run {
	row := func(id RowID, name string, status Status, obs ...ObligationID) Row {
		return Row{
			Chapter: "host-store", ID: id, Name: name, Spec: name + " spec",
			Labels: []string{"host-store", string(id)}, Obligations: obs, Status: status,
			Duration: 1500 * time.Millisecond,
		}
	}
	passed := row("acquire-empty", "Acquire on an empty realm", StatusPassed, "ob:fence")
	reopen := row("reopen", "Reopen", StatusPassed, "ob:2", "ob:7")
	kill := row("kill", "Kill", StatusFailed, "ob:1", "ob:2")
	kill.Failures = []Failure{{
		Message:    "the next writer saw the batch in session/a but not in record/b",
		Obligation: "ob:1",
		Expected:   `head record/b at version 3`,
		Got:        `head record/b at version 2`,
		Diff:       "@@ heads @@\n-record/b v3\n+record/b v2",
		Trail:      []string{"acquire_fence(exclusive) = 1", "commit(c-1) = Ok", "kill"},
		Location:   "chapters/kill.go:88",
	}}
	kill.Repro = "conform reproduce --seed 42 --row kill"
	kill.Output = "log line 1\nlog line 2\n"
	stale := row("stale-fence", "Stale fence", StatusFailed, "ob:5", "ob:fence")
	stale.Failures = []Failure{
		{Message: "a superseded writer's batch became visible", Obligation: "ob:5", Expected: "absent", Got: "present", Trail: []string{"a", "b"}, Timeline: sampleTimeline()},
		{Message: "renew of a superseded token answered Ok", Obligation: "ob:fence", Expected: "FencedOut", Got: "Ok"},
	}
	stale.Repro = "conform reproduce --seed 42 --row stale-fence"
	takeover := row("takeover", "Takeover with a commit in flight", StatusNotExercised, "ob:1", "ob:5")
	takeover.NotExercised = []string{"hold a commit in flight: the store has no in-store failpoints"}
	retry := row("retry", "Retry", StatusNotRun, "ob:3")
	retry.NotSelected = true // the label filter left it out
	other := Row{Chapter: "long-run", ID: "restart", Name: "Restart", Spec: "Restart continues",
		Labels: []string{"long-run"}, Obligations: []ObligationID{"ob:2"}, Status: StatusPassed, Duration: time.Second}
	return &Run{
		Schema: SchemaVersion, Tool: "conform", Version: "v0.1.0", Store: "sqlite:///tmp/realm.db",
		Seed: 42, Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 9 * time.Second,
		Failpoints: []string{"commitHold=pause"}, LabelFilter: "host-store",
		Obligations: catalogue(),
		Rows:        []Row{passed, reopen, kill, stale, takeover, retry, other},
	}
}

// passingRun is a conformant run.
func passingRun() *Run {
	r := sampleRun()
	r.Rows = r.Rows[:2]
	return r
}

// hostile is store text built to break reports: markup, table pipes,
// backticks, control characters, invalid UTF-8, a bidi override, and a
// mebibyte of filler.
var hostile = "<script>alert(1)</script> | `tick` ``` \x00 \x1b[31m red \r\x7f\xff\u202e & &lt; $x$ - [a](javascript:x) ]]> end\n# heading\n```\n" +
	strings.Repeat("A", 1<<20)

// hostileRun puts hostile text in every text field of a run.
func hostileRun() *Run {
	many := make([]string, 1000)
	for i := range many {
		many[i] = hostile[:200]
	}
	many[999] = hostile
	f := Failure{Message: hostile, Obligation: ObligationID(hostile), Expected: hostile, Got: hostile, Diff: hostile, Trail: many, Location: hostile}
	rows := []Row{
		{Chapter: ChapterID(hostile), ID: RowID(hostile), Name: hostile, Spec: hostile, Labels: []string{hostile}, Obligations: []ObligationID{ObligationID(hostile), "ob:1"},
			Status: StatusFailed, NotExercised: []string{hostile}, Failures: []Failure{f, f}, Repro: hostile, Output: hostile},
		{Chapter: ChapterID(hostile), ID: RowID(hostile), Name: hostile, Spec: hostile, Labels: []string{hostile}, Obligations: []ObligationID{ObligationID(hostile)},
			Status: StatusNotExercised, NotExercised: []string{hostile, hostile}},
		{Chapter: "c", ID: "x", Name: "x", Status: Status(hostile)},
	}
	return &Run{
		Schema: SchemaVersion, Tool: hostile, Version: hostile, Store: hostile, Failpoints: []string{hostile},
		LabelFilter: hostile, Obligations: []Obligation{{ID: "ob:1", Title: hostile, Statement: hostile}}, Rows: rows,
	}
}

// sampleTimeline is a shrunk history of three processes with one of each
// thing a timeline draws: answers ok, refused, lost and not sent, a call
// that never returned, faults in the wrapper and in the store, opens, a
// kill and a close; the model disagrees with event 9.
func sampleTimeline() *timeline.Timeline {
	wrapper := func(site, when string) []timeline.Fault {
		return []timeline.Fault{{Layer: "wrapper", Site: site, Kind: "kill", When: when}}
	}
	return &timeline.Timeline{
		Lanes: []string{"p0", "p1", "p2"},
		Events: []timeline.Event{
			{ID: 0, Lane: 0, Call: 1, Return: 2, Mark: timeline.MarkOpen, Label: "open", Answer: timeline.AnswerOK},
			{ID: 1, Lane: 1, Call: 3, Return: 4, Mark: timeline.MarkOpen, Label: "open", Answer: timeline.AnswerOK},
			{ID: 2, Lane: 0, Call: 5, Return: 8, Label: "acquire Exclusive", Answer: timeline.AnswerOK, Result: "tok=1"},
			{ID: 3, Lane: 1, Call: 6, Return: 7, Label: "load session/a", Answer: timeline.AnswerOK, Result: "absent"},
			{ID: 4, Lane: 0, Call: 9, Return: 12, Label: "commit c1 tok=1 session/a", Answer: timeline.AnswerLost, Faults: wrapper("in-flight", "")},
			{ID: 5, Lane: 1, Call: 10, Return: 13, Label: "acquire Takeover", Answer: timeline.AnswerOK, Result: "tok=2"},
			{ID: 6, Lane: 0, Call: 14, Return: 15, Mark: timeline.MarkKill, Label: "kill", Answer: timeline.AnswerOK},
			{ID: 7, Lane: 2, Call: 16, Return: 17, Mark: timeline.MarkOpen, Label: "open", Answer: timeline.AnswerOK},
			{ID: 8, Lane: 1, Call: 18, Return: 21, Label: "commit c2 tok=2 session/a", Answer: timeline.AnswerNotSent, Faults: wrapper("before-send", timeline.FaultBefore)},
			{ID: 9, Lane: 2, Call: 19, Return: 22, Label: "load session/a", Answer: timeline.AnswerOK, Result: "v1 c1",
				Detail: `#9 p2/h3 [19,22] load Session/a → v1 c1 head="h"`},
			{ID: 10, Lane: 2, Call: 23, Return: 26, Label: "renew tok=1", Answer: "FencedOut", Result: "current=2"},
			{ID: 11, Lane: 1, Call: 24, Label: "commit c3 tok=2 session/b",
				Faults: []timeline.Fault{{Layer: "instore", Site: "commit-after-point", Kind: "crash"}}},
			{ID: 12, Lane: 2, Call: 27, Return: 28, Mark: timeline.MarkClose, Label: "close", Answer: timeline.AnswerOK},
		},
		Highlight: 9,
	}
}

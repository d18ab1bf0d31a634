package longrun

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/textsafe"
)

// afterOpen checks what a restarted process found against what the spec
// knows: no round lost after its commit landed, the same run id when a
// commit had landed and a new one when none had, the transcript so far
// equal to the reference's, and no garbage chunk left by the open.
func (s *work) afterOpen(d *driver) {
	spec.Helper()
	l, e := s.l, s.l.Env
	n := d.st.round
	if n < s.landed {
		l.Fail(chapter.ObDurable, fmt.Sprintf("round %d's commit landed (the store answered Ok), yet p%d finds the run at round %d", s.landed, d.p.PID, n),
			fmt.Sprintf("at least %d rounds", s.landed), fmt.Sprintf("%d rounds", n))
	}
	switch {
	case n > 0 && s.landedRun != "" && d.runID != s.landedRun:
		l.Fail(chapter.ObRun, fmt.Sprintf("p%d continues under run id %q, but rounds were committed under %q", d.p.PID, d.runID, s.landedRun),
			"the same run id after a commit landed", d.runID)
	case n == 0 && slices.Contains(s.runIDs, d.runID):
		l.Fail(chapter.ObRun, fmt.Sprintf("nothing was committed, yet p%d runs under the earlier run id %q", d.p.PID, d.runID),
			"a new run", d.runID)
	}
	q := e.MustOpen(l.Ctx)
	defer q.Kill()
	s.checkTranscript(q, d.runID, n)
	l.CheckGarbage(q)
}

// checkTranscript compares what the store holds of the run with the
// reference's first n rounds: the input record, the Session scope's head
// and rows, and each round's Record scope, which exists for the committed
// rounds only.
func (s *work) checkTranscript(p *chapter.Proc, run string, n int) {
	spec.Helper()
	l := s.l
	in, ok := l.Value(p, s.input())
	switch {
	case n > 0 && (!ok || string(in) != "run "+run):
		l.Fail(chapter.ObRun, "the input record does not name the run", "run "+run, fmt.Sprintf("%q (exists %v)", in, ok))
	case n == 0 && ok:
		l.Fail(chapter.ObRun, "no round is committed, yet the input record exists", "no input record", string(in))
	}
	st, ok := l.Value(p, s.session(run))
	switch {
	case n > 0 && (!ok || !bytes.Equal(st, s.ref[n-1].state.encode())):
		l.Fail(chapter.ObRun, fmt.Sprintf("the run's state after round %d is not the reference's", n), textsafe.Payload(s.ref[n-1].state.encode()), textsafe.Payload(st))
	case n == 0 && ok:
		l.Fail(chapter.ObRun, "no round is committed, yet the run's Session scope exists", "no Session scope", textsafe.Payload(st))
	}
	rows := l.Rows(p, s.session(run))
	var want []hoststore.Row
	for i := 0; i < n; i++ {
		want = append(want, hoststore.Row{Index: hoststore.RowIndex(i), Data: s.ref[i].row})
	}
	if d := chapter.DiffRows(want, rows); d != "" {
		msg := fmt.Sprintf("the run's transcript after round %d is not the reference's", n)
		if len(rows) > n {
			msg = fmt.Sprintf("the transcript holds %d rounds where %d were committed: a round was committed twice", len(rows), n)
		}
		l.FailDiff(chapter.ObRun, msg, chapter.RowsText(want), chapter.RowsText(rows), d)
	}
	for k := 1; k <= s.sc.rounds; k++ {
		out, ok := l.Value(p, s.out(run, k))
		switch {
		case k <= n && (!ok || !bytes.Equal(out, s.ref[k-1].out)):
			l.Fail(chapter.ObRun, fmt.Sprintf("round %d's tool outputs are not the reference's", k), textsafe.Payload(s.ref[k-1].out), fmt.Sprintf("%s (exists %v)", textsafe.Payload(out), ok))
		case k > n && ok:
			l.Fail(chapter.ObAllOrNothing, fmt.Sprintf("round %d's Record scope exists, yet the run's Session scope holds %d rounds", k, n), "the round wholly or not at all", "part of it")
		}
	}
}

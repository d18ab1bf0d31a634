package chapters

import (
	"bytes"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// afterOpen checks what a restarted process found against what the spec
// knows: no round lost after its commit landed, the same run id when a
// commit had landed and a new one when none had, the transcript so far
// equal to the reference's, and no garbage chunk left by the open.
func (s *lrSpec) afterOpen(d *lrDriver) {
	GinkgoHelper()
	l, e := s.l, s.l.e
	n := d.st.round
	if n < s.landed {
		l.fail(ObDurable, fmt.Sprintf("round %d's commit landed (the store answered Ok), yet p%d finds the run at round %d", s.landed, d.lp.pid, n),
			fmt.Sprintf("at least %d rounds", s.landed), fmt.Sprintf("%d rounds", n))
	}
	switch {
	case n > 0 && s.landedRun != "" && d.runID != s.landedRun:
		l.fail(ObRun, fmt.Sprintf("p%d continues under run id %q, but rounds were committed under %q", d.lp.pid, d.runID, s.landedRun),
			"the same run id after a commit landed", d.runID)
	case n == 0 && slices.Contains(s.runIDs, d.runID):
		l.fail(ObRun, fmt.Sprintf("nothing was committed, yet p%d runs under the earlier run id %q", d.lp.pid, d.runID),
			"a new run", d.runID)
	}
	q := e.MustOpen(l.ctx)
	defer q.Kill()
	s.checkTranscript(q, d.runID, n)
	l.checkGarbage(q)
}

// value reads the value of a scope the run wrote, through p.
func (l *lab) value(p *Proc, sc hoststore.ScopeRef) ([]byte, bool) {
	GinkgoHelper()
	h, err := p.Load(l.ctx, sc)
	if err != nil {
		l.fail(ObOperations, fmt.Sprintf("LoadHead(%s) failed", sc), "a head or none", errText(err))
	}
	if h == nil {
		return nil, false
	}
	v, err := writer.ReadValue(l.ctx, procStore{p: p, timing: l.timing}, h.Head)
	if err != nil {
		l.fail(ObAllOrNothing, fmt.Sprintf("the value of %s cannot be read whole", sc), "the value the run committed, with every chunk", errText(err))
	}
	return v, true
}

// rows reads every visible row of sc through p, from index 0.
func (l *lab) rows(p *Proc, sc hoststore.ScopeRef) []hoststore.Row {
	GinkgoHelper()
	var out []hoststore.Row
	for from := hoststore.RowIndex(0); ; {
		rs, err := p.Read(l.ctx, sc, from, readPage)
		if err != nil {
			l.fail(ObOperations, fmt.Sprintf("ReadRows(%s, from %d) failed", sc, from), "rows", errText(err))
		}
		out = append(out, rs...)
		if len(rs) < readPage {
			return out
		}
		from = rs[len(rs)-1].Index + 1
	}
}

// checkTranscript compares what the store holds of the run with the
// reference's first n rounds: the input record, the Session scope's head
// and rows, and each round's Record scope, which exists for the committed
// rounds only.
func (s *lrSpec) checkTranscript(p *Proc, run string, n int) {
	GinkgoHelper()
	l := s.l
	in, ok := l.value(p, l.lrInput())
	switch {
	case n > 0 && (!ok || string(in) != "run "+run):
		l.fail(ObRun, "the input record does not name the run", "run "+run, fmt.Sprintf("%q (exists %v)", in, ok))
	case n == 0 && ok:
		l.fail(ObRun, "no round is committed, yet the input record exists", "no input record", string(in))
	}
	st, ok := l.value(p, l.lrSession(run))
	switch {
	case n > 0 && (!ok || !bytes.Equal(st, s.ref[n-1].state.encode())):
		l.fail(ObRun, fmt.Sprintf("the run's state after round %d is not the reference's", n), reports.Payload(s.ref[n-1].state.encode()), reports.Payload(st))
	case n == 0 && ok:
		l.fail(ObRun, "no round is committed, yet the run's Session scope exists", "no Session scope", reports.Payload(st))
	}
	rows := l.rows(p, l.lrSession(run))
	var want []hoststore.Row
	for i := 0; i < n; i++ {
		want = append(want, hoststore.Row{Index: hoststore.RowIndex(i), Data: s.ref[i].row})
	}
	if d := diffRows(want, rows); d != "" {
		msg := fmt.Sprintf("the run's transcript after round %d is not the reference's", n)
		if len(rows) > n {
			msg = fmt.Sprintf("the transcript holds %d rounds where %d were committed: a round was committed twice", len(rows), n)
		}
		l.failDiff(ObRun, msg, rowsText(want), rowsText(rows), d)
	}
	for k := 1; k <= s.sc.rounds; k++ {
		out, ok := l.value(p, l.lrOut(run, k))
		switch {
		case k <= n && (!ok || !bytes.Equal(out, s.ref[k-1].out)):
			l.fail(ObRun, fmt.Sprintf("round %d's tool outputs are not the reference's", k), reports.Payload(s.ref[k-1].out), fmt.Sprintf("%s (exists %v)", reports.Payload(out), ok))
		case k > n && ok:
			l.fail(ObAllOrNothing, fmt.Sprintf("round %d's Record scope exists, yet the run's Session scope holds %d rounds", k, n), "the round wholly or not at all", "part of it")
		}
	}
}

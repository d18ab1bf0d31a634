package worker

import (
	"strings"
	"testing"
	"time"
)

func TestScriptReference(t *testing.T) {
	sc := &script{seed: 9, unit: time.Second, out: 200, jobs: 3}
	ref := sc.reference()
	for j := 1; j <= 3; j++ {
		steps := sc.steps(j)
		if len(ref.states[j-1]) != steps+1 || len(ref.rows[j-1]) != steps+1 {
			t.Fatalf("job %d: %d states and %d rows for %d steps", j, len(ref.states[j-1]), len(ref.rows[j-1]), steps)
		}
		last := ref.states[j-1][steps]
		st, err := decodeState(last.encode())
		if err != nil || st.done != steps || !strings.Contains(string(ref.rows[j-1][steps]), "finished") {
			t.Fatalf("job %d's last state %+v, %v", j, st, err)
		}
		if got := rowsUpTo(ref.rows[j-1], steps-1, steps); len(got) != steps-1 {
			t.Fatalf("rows before the last step: %d", len(got))
		}
	}
}

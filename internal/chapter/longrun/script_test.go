package longrun

import (
	"bytes"
	"testing"
	"time"
)

func TestScriptReplaysFromAnyCommittedState(t *testing.T) {
	sc := &script{seed: 42, rounds: 6, unit: time.Second, mem: 500, out: 300}
	ref := sc.reference()
	if len(ref) != 6 {
		t.Fatalf("%d rounds, want 6", len(ref))
	}
	again := sc.reference()
	for k := range ref {
		if !bytes.Equal(ref[k].row, again[k].row) || !bytes.Equal(ref[k].out, again[k].out) {
			t.Fatalf("round %d differs between two plays of one script", k+1)
		}
	}
	// A restart that decodes round k's state plays the rest identically.
	for k := 1; k < len(ref); k++ {
		st, err := decodeState(ref[k-1].state.encode())
		if err != nil {
			t.Fatal(err)
		}
		m := sc.model(k+1, st.digest)
		var outs [][]byte
		for _, a := range m.tools {
			o, _ := sc.tool(a)
			outs = append(outs, o)
		}
		got := sc.play(k+1, st, m, outs)
		if !bytes.Equal(got.state.encode(), ref[k].state.encode()) || !bytes.Equal(got.row, ref[k].row) {
			t.Fatalf("round %d replayed from the decoded state differs from the reference", k+1)
		}
	}
	other := (&script{seed: 43, rounds: 6, unit: time.Second, mem: 500, out: 300}).reference()
	if bytes.Equal(other[0].row, ref[0].row) {
		t.Fatal("two seeds play the same first round")
	}
	if _, err := decodeState([]byte("something else")); err == nil {
		t.Fatal("decodeState accepted a foreign value")
	}
}

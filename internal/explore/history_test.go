package explore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

func TestHistoryJSONRoundTrip(t *testing.T) {
	s := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}
	h := History{Seed: 7, Procs: 2, Events: []Event{
		{ID: 0, Proc: 0, Handle: 1, Op: OpAcquire, Call: 1, Return: 2, Mode: "Exclusive", Grant: &hoststore.FenceGrant{Token: 1}},
		{ID: 1, Proc: 0, Handle: 1, Op: OpCommit, Call: 3, Return: 4, Batch: &Batch{ID: "c1", Token: 1, Updates: []hoststore.ScopeUpdate{
			{Scope: s, Next: 1, Head: hoststore.Ptr([]byte("h")), Append: [][]byte{[]byte("r0")}}}}},
		{ID: 2, Proc: 1, Handle: 2, Op: OpLoad, Call: 5, Return: 6, Scope: &s, Head: &hoststore.VersionedHead{Version: 1, CommitID: "c1", Head: []byte("h")}},
		{ID: 3, Proc: 1, Handle: 2, Op: OpCommit, Call: 7, Lost: true, Batch: &Batch{ID: "c2", Token: 1, Updates: []hoststore.ScopeUpdate{
			{Scope: s, Previous: hoststore.Ptr(hoststore.ScopeVersion(1)), Next: 2, Delete: true}}},
			Faults: []Fault{{Layer: "wrapper", Site: "in-flight", Kind: "kill"}}},
	}}
	data, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	var back History
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, back) {
		t.Fatalf("round trip changed the history:\nwant %+v\ngot  %+v", h, back)
	}
	text := h.Text()
	if got := strings.Count(text, "\n"); got != len(h.Events) {
		t.Fatalf("Text has %d lines, want %d:\n%s", got, len(h.Events), text)
	}
	for _, want := range []string{"#1 p0/h1 [3,4] commit c1 tok=1 {Session/a create +[\"r0\"] head=\"h\"} → ok", "!wrapper/in-flight/kill → lost", "[7,…]"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text lacks %q:\n%s", want, text)
		}
	}
	if !back.Events[3].Unknown() || back.Events[1].Unknown() {
		t.Errorf("Unknown: want the lost commit unknown and the answered one known")
	}
}

package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestShardAndExplorationRoundTrip: report.json keeps the shard, the
// exploration and its ledger, and every report shows the campaign.
func TestShardAndExplorationRoundTrip(t *testing.T) {
	run := &Run{Tool: "conform", Version: "0.1.0", Store: "reference:", Seed: 9,
		Shard: &Shard{Index: 2, Count: 4},
		Explore: &Exploration{Histories: 300, Played: 76, Ops: 5000, Seeds: []uint64{3, 4}, Coverage: map[string]int{"commit/ok": 12},
			Failed:   []LedgerEntry{{Index: 6, Seed: 77, Obligation: "ob:7", Repro: "conform reproduce 'v1;seed=9'"}},
			Replayed: []LedgerEntry{{Index: 1, Seed: 55, Failed: true}}},
		Rows: []Row{{Chapter: "explore", ID: "explore-histories", Status: StatusPassed}}}
	var b bytes.Buffer
	if err := writeJSON(&b, run); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if *got.Shard != *run.Shard || got.Explore.Failed[0] != run.Explore.Failed[0] || got.Explore.Replayed[0] != run.Explore.Replayed[0] || got.Explore.Coverage["commit/ok"] != 12 || len(got.Explore.Seeds) != 2 {
		t.Fatalf("round trip: shard %v, exploration %+v", got.Shard, got.Explore)
	}
	want := "shard 2/4; 2 histories of a budget of 300 played; 1 replayed from a ledger first, 1 of them failed again; 1 failing histories in this report's ledger"
	if c := run.campaign(); c != want {
		t.Fatalf("Campaign() = %q, want %q", c, want)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"markdown": func(w *bytes.Buffer) error { return writeMarkdown(w, run) },
		"html":     func(w *bytes.Buffer) error { return writeHTML(w, run) },
	} {
		var out bytes.Buffer
		if err := write(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "shard 2/4; 2 histories") {
			t.Errorf("the %s report does not show the campaign", name)
		}
	}
	if (&Run{}).campaign() != "" {
		t.Error("a run of no campaign shows one")
	}
}

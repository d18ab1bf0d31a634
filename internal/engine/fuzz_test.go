package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/reports"
)

// FuzzParseRepro feeds repro strings to the parser: it never panics, and
// what it accepts renders back to a string that parses to the same repro.
func FuzzParseRepro(f *testing.F) {
	for _, s := range []string{
		"v1;seed=42;row=kill",
		"v1;seed=18446744073709551615;row=retry;fp=commit-locked%3D1%2Areturn%28%22crash%22%29;store=reference%3A",
		"v1;seed=1;fp=commit-locked%3Dreturn%28%22%FF%22%29",
		"v1;seed=1;store=%00",
		"v2;seed=1",
		"v1;;;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRepro(s)
		if err != nil {
			return
		}
		back, err := ParseRepro(r.String())
		if err != nil {
			t.Fatalf("ParseRepro(%q) = %+v, whose String %q does not parse: %v", s, r, r.String(), err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip of %q: %+v, then %+v", s, r, back)
		}
	})
}

// FuzzValidateLabelFilter feeds label filters to the validator, which
// must never panic.
func FuzzValidateLabelFilter(f *testing.F) {
	for _, s := range []string{"row:kill || ob:5", "!(chapter:host-store)", "((", "row:kil", "/re[/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ValidateLabelFilter(s)
	})
}

func TestParseReproRefusesInvalidText(t *testing.T) {
	for _, s := range []string{
		"v1;seed=1;fp=commit-locked%3Dreturn%28%22%FF%22%29",
		"v1;seed=1;store=a%00b",
		"v1;seed=1;row=%1b%5b2J",
	} {
		if _, err := ParseRepro(s); err == nil {
			t.Errorf("ParseRepro(%q) accepted it", s)
		}
	}
}

// FuzzMergeReports feeds two report.json files, as 'conform merge' and
// 'explore --replay' read them from disk, to ReadJSON and Merge: neither
// panics, and a merged run renders to all four reports without panicking.
func FuzzMergeReports(f *testing.F) {
	enc := func(r *reports.Run) []byte {
		r.Schema = reports.SchemaVersion
		dir := filepath.Join(f.TempDir(), "reports")
		if err := reports.WriteAll(dir, r); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	ids := itemIDs(func(xp.Item) bool { return true })
	f.Add(enc(shardRun(0, 2, reports.StatusPassed, ids...)), enc(shardRun(1, 2, reports.StatusFailed, ids[:3]...)))
	f.Add(enc(shardRun(0, 1, reports.StatusPassed)), []byte(`{"schema":2}`))
	f.Add([]byte(`{"schema":2,"shard":{"index":0,"count":1000000000000}}`), []byte(`{"schema":2,"shard":{"index":-1,"count":-3}}`))
	f.Add([]byte(`{"schema":2,"shard":{"index":0,"count":2},"rows":[{"id":"explore-histories","chapter":"explore","status":"failed"}]}`),
		[]byte(`{"schema":2,"shard":{"index":1,"count":2},"rows":[{"id":"explore-histories","chapter":"explore","status":"?"}],"explore":{"histories":-1,"coverage":{"x":-5}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var in []shardReport
		for i, data := range [][]byte{a, b} {
			run, err := reports.ReadJSON(bytes.NewReader(data))
			if err != nil {
				continue
			}
			in = append(in, shardReport{From: fmt.Sprint("shard-", i), Run: run})
		}
		for n := 1; n <= len(in); n++ {
			m, err := mergeShards(slices.Clone(in[:n]))
			if err != nil {
				continue
			}
			_ = m.Verdict()
			_ = m.Reasons()
			if err := reports.WriteAll(filepath.Join(t.TempDir(), "reports"), m); err != nil {
				t.Fatalf("a merged run does not render: %v", err)
			}
		}
	})
}

package obligation

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conform-spi/conform/reports"
)

var update = flag.Bool("update", false, "write docs/obligations.tsv from the catalogue")

// tsvPath is docs/obligations.tsv, from this package's directory.
var tsvPath = filepath.Join("..", "..", "docs", "obligations.tsv")

// TestTSV fails when docs/obligations.tsv and the catalogue differ. With
// -update it writes the file from the catalogue instead.
func TestTSV(t *testing.T) {
	want, err := All.TSV()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(tsvPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(tsvPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("docs/obligations.tsv line %d:\n got %q\nwant %q", i+1, gl, wl)
		}
	}
	t.Error("docs/obligations.tsv is not the catalogue; run go test ./internal/obligation -run TestTSV -update")
}

// TestTSVRefuses checks that TSV refuses what the file cannot hold.
func TestTSVRefuses(t *testing.T) {
	ok := All[0]
	for _, bad := range []func(o *reports.Obligation){
		func(o *reports.Obligation) { o.Statement = "two\tcolumns" },
		func(o *reports.Obligation) { o.Title = "two\nlines" },
		func(o *reports.Obligation) { o.Doc = "docs/timing.md#ob-1" },
		func(o *reports.Obligation) { o.Doc = contractDoc },
		func(o *reports.Obligation) { o.Title = "" },
	} {
		o := ok
		bad(&o)
		if b, err := (Catalogue{o}).TSV(); err == nil {
			t.Errorf("TSV of %+v = %q, want an error", o, b)
		}
	}
	if _, err := (Catalogue{ok}).TSV(); err != nil {
		t.Errorf("TSV of %s: %v", ok.ID, err)
	}
}

// TestIDs checks that the catalogue names each ID once, and that ByID finds
// each entry.
func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range All {
		if seen[string(o.ID)] {
			t.Errorf("%s is in the catalogue twice", o.ID)
		}
		seen[string(o.ID)] = true
		if got, ok := ByID(o.ID); !ok || got != o {
			t.Errorf("ByID(%s) = %+v, %v", o.ID, got, ok)
		}
	}
	if _, ok := ByID("ob:none"); ok {
		t.Error("ByID found an ID the catalogue does not hold")
	}
}

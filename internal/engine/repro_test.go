package engine

import (
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter/explore"
)

// TestReproHistoryRoundTrips: a repro that carries a shrunk history
// (history=h1…) renders it after hist=N and reads it back as it was; one
// longer than a repro value may be is left out (the repro names the
// history by hist=N alone); a value that is not a history is refused.
func TestReproHistoryRoundTrips(t *testing.T) {
	h := 3
	enc := "h1.7Vhdb9s2FP0rBD_vDXnJnLSLA-_"
	r := Repro{Seed: 7, Row: "explore-histories", Store: "canary:ignore-token", Hist: &h, History: enc}
	s := r.String()
	if !strings.HasSuffix(s, ";hist=3;history="+enc) {
		t.Fatalf("String() = %q, want it to end with ;hist=3;history=%s", s, enc)
	}
	back, err := ParseRepro(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.History != enc || back.Hist == nil || *back.Hist != 3 || back.String() != s {
		t.Fatalf("ParseRepro(%q) = %+v", s, back)
	}
	only, err := ParseRepro("v1;seed=7;row=explore-histories;history=" + enc)
	if err != nil || only.History != enc || only.Hist != nil {
		t.Fatalf("a repro with history= alone: %+v, %v", only, err)
	}

	long := Repro{Seed: 7, Hist: &h, History: "h1." + strings.Repeat("A", maxRepro)}
	if s := long.String(); strings.Contains(s, "history=") || !strings.HasSuffix(s, ";hist=3") {
		t.Errorf("a history over %d bytes: %q, want hist=3 alone", maxRepro, s)
	}
	for _, bad := range []string{
		"v1;seed=7;history=",
		"v1;seed=7;history=x1.abc",
		"v1;seed=7;history=h1.a%0Ab",
		"v1;seed=7;history=h1." + strings.Repeat("A", maxRepro),
	} {
		if _, err := ParseRepro(bad); err == nil || !strings.Contains(err.Error(), "history") {
			t.Errorf("ParseRepro(%.60q) = %v, want an error naming history", bad, err)
		}
	}

	// The repro turns the chapter on to replay the history, and the
	// chapter's repro line for it carries it again.
	set, err := resolveEnv(nil, envOf(map[string]string{EnvRepro: s}))
	if err != nil {
		t.Fatal(err)
	}
	if set.ExploreHistory != enc || !exploring(set.Options) || !strings.Contains(set.Header(Version), "exploration a shrunk history") {
		t.Fatalf("a repro with history=: %+v", set.Options)
	}
	cfg := chapterConfig(set, nil)
	if cfg.Settings.ExploreHistory != enc {
		t.Errorf("the chapter's history is %q", cfg.Settings.ExploreHistory)
	}
	if got := cfg.Settings.ReproHistory(explore.RowID, 3, enc); !strings.Contains(got, ";hist=3;history="+enc+"'") {
		t.Errorf("the chapter's repro for the shrunk history is %q", got)
	}
}

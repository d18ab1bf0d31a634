package engine

import (
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter/explore"
)

// exploring reports whether a run with o includes the exploration chapter.
func exploring(o Options) bool {
	for _, c := range activeChapters(o) {
		if c.ID == explore.ID {
			return true
		}
	}
	return false
}

func TestReproHistRoundTrips(t *testing.T) {
	h := 17
	r := Repro{Seed: 5, Row: "explore-histories", Store: "canary:ignore-token", Hist: &h}
	s := r.String()
	if !strings.HasSuffix(s, ";hist=17") {
		t.Fatalf("String() = %q, want it to end with ;hist=17", s)
	}
	back, err := ParseRepro(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hist == nil || *back.Hist != 17 || back.String() != s {
		t.Fatalf("ParseRepro(%q) = %+v", s, back)
	}
	if r, _ := ParseRepro("v1;seed=5"); r.Hist != nil {
		t.Errorf("a repro without hist= names history %d", *r.Hist)
	}
	for _, bad := range []string{"v1;seed=5;hist=-1", "v1;seed=5;hist=x", "v1;seed=5;hist="} {
		if _, err := ParseRepro(bad); err == nil || !strings.Contains(err.Error(), "hist") {
			t.Errorf("ParseRepro(%q) = %v, want an error naming hist", bad, err)
		}
	}
}

// TestExploreSettings: the chapter is on by default with the default
// budget; WithExplore and CONFORM_EXPLORE_HISTORIES set another budget,
// WithoutExplore and CONFORM_EXPLORE_HISTORIES=0 leave it out, and a
// repro's hist= turns it on to play that history alone.
func TestExploreSettings(t *testing.T) {
	def, err := resolveEnv(nil, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !exploring(def.Options) || def.ExploreBudget() != DefaultExploreHistories || def.ExploreHist != nil || !strings.Contains(def.Header(Version), "exploration 300 histories") {
		t.Fatalf("the exploration chapter is not on by default with %d histories: %+v, header %q", DefaultExploreHistories, def.Options, def.Header(Version))
	}
	if c := chapterConfig(def, nil); c.Settings.ExploreBudget() != DefaultExploreHistories {
		t.Errorf("the chapter is given %d histories by default", c.Settings.ExploreBudget())
	}
	on, _ := resolveEnv([]Option{WithExplore(0)}, envOf(nil))
	if !exploring(on.Options) || on.ExploreBudget() != DefaultExploreHistories {
		t.Errorf("WithExplore(0): %d histories, header %q", on.ExploreBudget(), on.Header(Version))
	}
	off, _ := resolveEnv([]Option{WithoutExplore()}, envOf(nil))
	if exploring(off.Options) || off.ExploreBudget() != 0 || !strings.Contains(off.Header(Version), "exploration left out") {
		t.Errorf("WithoutExplore: exploring %v, %d histories, header %q", exploring(off.Options), off.ExploreBudget(), off.Header(Version))
	}
	envOff, _ := resolveEnv([]Option{WithExplore(40)}, envOf(map[string]string{EnvExplore: "0"}))
	if exploring(envOff.Options) {
		t.Errorf("%s=0 over WithExplore(40) still explores", EnvExplore)
	}
	fromEnv, err := resolveEnv([]Option{WithExplore(5)}, envOf(map[string]string{EnvExplore: "40"}))
	if err != nil || fromEnv.ExploreBudget() != 40 {
		t.Errorf("%s=40 over WithExplore(5): %d histories, %v", EnvExplore, fromEnv.ExploreBudget(), err)
	}
	if _, err := resolveEnv(nil, envOf(map[string]string{EnvExplore: "-3"})); err == nil {
		t.Errorf("%s=-3 accepted", EnvExplore)
	}
	rep, err := resolveEnv(nil, envOf(map[string]string{EnvRepro: "v1;seed=9;row=explore-histories;hist=4"}))
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExploreHist == nil || *rep.ExploreHist != 4 || rep.LabelFilter != "row:explore-histories" || !exploring(rep.Options) {
		t.Fatalf("a repro with hist=4: %+v", rep.Options)
	}
	cfg := chapterConfig(rep, nil)
	if got := cfg.Settings.ReproHist(explore.RowID, 4); !strings.Contains(got, "v1;seed=9;row=explore-histories;hist=4") {
		t.Errorf("the chapter's repro for history 4 is %q", got)
	}
}

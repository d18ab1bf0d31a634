package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/fences"
)

// TestFencesAreNotAStoreChapter: a store's run lists, selects and reports
// the store chapters alone; the admission chapter is the fences run's, and
// a fences run's alone.
func TestFencesAreNotAStoreChapter(t *testing.T) {
	for _, ch := range chaptersOf(Options{}) {
		if ch.ID == fences.ID {
			t.Fatalf("a store's run has the chapter %s", ch.ID)
		}
	}
	if got := commandOf("adm-try"); got != "fences" {
		t.Errorf("row adm-try is %q's, want fences'", got)
	}
	if got := commandOf("kill"); got != "run" {
		t.Errorf("row kill is %q's, want run's", got)
	}
	var o Options
	asFencesRun()(&o)
	chs := chaptersOf(o)
	if len(chs) != 1 || chs[0].ID != fences.ID {
		t.Errorf("a fences run has %d chapters, want the admission chapter alone", len(chs))
	}
	if chs := chaptersOf(Options{}); len(chs) == 0 || chs[0].ID == fences.ID {
		t.Error("a store's run has the fences run's chapters")
	}
}

// TestFencesRepro: a fences run's repro carries fences=, self too, and no
// store; its line names conform reproduce alone; a repro of an admission
// row without fences= is a fences run's too, over conform's own.
func TestFencesRepro(t *testing.T) {
	r := Repro{Seed: 3, Row: "adm-try", Store: "fences:self", Fences: "self"}
	s := r.String()
	if s != "v1;seed=3;row=adm-try;fences=self" {
		t.Fatalf("String() = %q", s)
	}
	back, err := ParseRepro(s)
	if err != nil || back.Fences != "self" || !fenceRepro(back) {
		t.Fatalf("ParseRepro(%q) = %+v, %v", s, back, err)
	}
	if line := ReproLine(r); line != "conform reproduce '"+s+"'" {
		t.Errorf("ReproLine = %q, want conform reproduce alone", line)
	}
	exec := Repro{Seed: 3, Row: "adm-try", Fences: "exec:python3 h.py"}
	if back, err := ParseRepro(exec.String()); err != nil || back.Fences != exec.Fences {
		t.Errorf("an exec helper does not round-trip: %q → %+v, %v", exec.String(), back, err)
	}
	old, _ := ParseRepro("v1;seed=3;row=adm-try")
	if !fenceRepro(old) || old.FencesName() != "self" {
		t.Errorf("a repro of an admission row without fences= is not a run of conform's own fences: %+v", old)
	}
	if store, _ := ParseRepro(reproKill); fenceRepro(store) {
		t.Errorf("a store's repro is taken for a fences run's: %+v", store)
	}
	if _, err := ParseRepro("v1;seed=3;fences=nope"); err == nil || !strings.Contains(err.Error(), "exec:PROGRAM") {
		t.Errorf("a repro with fences=nope: %v, want refused", err)
	}
}

// TestStoreRunRefusesFences: Run, Register and RunBinary certify a store
// and refuse fences from the code or from CONFORM_REPRO, naming the
// command that certifies them.
func TestStoreRunRefusesFences(t *testing.T) {
	if _, err := resolveEnv([]Option{withFences("self", "")}, noEnv); err == nil || !strings.Contains(err.Error(), "conform fences") {
		t.Errorf("fences in a store's run: %v, want refused naming conform fences", err)
	}
	_, err := resolveEnv(nil, envOf(map[string]string{EnvRepro: "v1;seed=3;row=adm-try;fences=self"}))
	if err == nil || !strings.Contains(err.Error(), "conform reproduce 'v1;seed=3;row=adm-try;fences=self'") {
		t.Errorf("a fences repro in a store's run: %v, want refused naming conform reproduce", err)
	}
	if _, err := resolveEnv([]Option{asFencesRun(), withFences("self", "")}, noEnv); err != nil {
		t.Errorf("a fences run: %v", err)
	}
	if _, err := resolveEnv([]Option{asFencesRun()}, noEnv); err == nil {
		t.Error("a fences run without fences was not refused")
	}
}

// TestCommandRefusesFencesOnRun: conform run and conform reproduce of a
// store's repro refuse --fences and --fences-dir in one line naming
// conform fences, and their help does not show them.
func TestCommandRefusesFencesOnRun(t *testing.T) {
	c := Command{Default: "reference:"}
	for _, args := range [][]string{
		{"run", "--fences", "exec:helper"},
		{"run", "--fences-dir", "/tmp"},
		{"reproduce", "--fences", "self", reproKill},
	} {
		var out, errb bytes.Buffer
		code := c.Run(args, &out, &errb)
		if code != ExitUsage || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "conform fences") || out.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line naming conform fences", args, code, errb.String())
		}
	}
	var out bytes.Buffer
	if c.Run([]string{"run", "-h"}, &out, &out) != 0 || strings.Contains(out.String(), "fences") {
		t.Errorf("run's help shows the fences' flags:\n%s", out.String())
	}
}

// TestFencesReportListsAdmissionObligations: a fences run's report lists
// the admission chapter's rows and its adm:* obligations alone, and a
// store's run lists the shared obligations and none of them.
func TestFencesReportListsAdmissionObligations(t *testing.T) {
	o, err := resolveEnv([]Option{asFencesRun(), withFences("self", ""), WithReportDir("-")}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	run := newSuite(o).collect(nil, "", false)
	if len(run.Obligations) == 0 {
		t.Fatal("a fences run's report lists no obligation")
	}
	for _, ob := range run.Obligations {
		if !strings.HasPrefix(string(ob.ID), "adm:") {
			t.Errorf("a fences run's report lists obligation %s", ob.ID)
		}
	}
	for _, row := range run.Rows {
		if row.Chapter != fences.ID {
			t.Errorf("a fences run's report has row %s of chapter %s", row.ID, row.Chapter)
		}
	}
	store, err := resolveEnv([]Option{WithReportDir("-")}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	storeRun := newSuite(store).collect(nil, "", false)
	for _, ob := range storeRun.Obligations {
		if strings.HasPrefix(string(ob.ID), "adm:") {
			t.Errorf("a store's run's report lists obligation %s", ob.ID)
		}
	}
	if len(storeRun.Obligations) == 0 || storeRun.Obligations[0].ID != chapter.Obligations[0].ID {
		t.Errorf("a store's run's report does not start with the shared obligations: %v", storeRun.Obligations)
	}
}

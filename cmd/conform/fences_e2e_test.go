package main_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reports"
)

// storeChapters are the chapters a store's run lists, in order.
var storeChapters = []reports.ChapterID{"host-store", "long-run", "worker", "explore"}

// TestRunCertifiesTheStoreAlone: conform run lists, runs and reports the
// four store chapters and no row, chapter or obligation of the fences, in
// any of the four reports.
func TestRunCertifiesTheStoreAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, "run", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	var chs []reports.ChapterID
	for _, row := range run.Rows {
		if len(chs) == 0 || chs[len(chs)-1] != row.Chapter {
			chs = append(chs, row.Chapter)
		}
		if strings.HasPrefix(string(row.ID), "adm-") {
			t.Errorf("report.json lists the fences' row %s", row.ID)
		}
	}
	if strings.Join(reportsIDs(chs), ",") != strings.Join(reportsIDs(storeChapters), ",") {
		t.Errorf("report.json lists the chapters %v, want %v", chs, storeChapters)
	}
	if n := len(run.Selected()); n != len(run.Rows) {
		t.Errorf("%d of %d rows selected, want every one", n, len(run.Rows))
	}
	for _, o := range run.Obligations {
		if strings.HasPrefix(string(o.ID), "adm:") {
			t.Errorf("report.json lists the fences' obligation %s", o.ID)
		}
	}
	for name, text := range reportSet(t, dir) {
		if strings.Contains(text, "chapter:admission") || strings.Contains(text, "adm-exclusive-shared") {
			t.Errorf("%s names the admission chapter or its rows", name)
		}
	}
	if strings.Contains(r.stdout, "Realm admission fences") {
		t.Errorf("the run's live lines show the fences' rows:\n%s", r.stdout)
	}
}

func reportsIDs(ids []reports.ChapterID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// TestRunRefusesFences: conform run, and conform reproduce of a store's
// repro, refuse the fences' flags and a fences repro in CONFORM_REPRO,
// exit 2 with one line naming the command to use, and leave nothing
// behind.
func TestRunRefusesFences(t *testing.T) {
	cases := []struct {
		env  []string
		args []string
		msg  string
	}{
		{nil, []string{"run", "--fences", "self"}, "conform run: --fences: conform run certifies the store alone; certify fences with: conform fences --fences 'self'"},
		{nil, []string{"run", "--fences", "exec:python3 helper.py"}, "conform fences --fences 'exec:python3 helper.py'"},
		{nil, []string{"run", "--fences-dir", "/tmp"}, "conform run: --fences-dir: conform run certifies the store alone"},
		{nil, []string{"reproduce", "--fences", "self", "v1;seed=1;row=kill"}, "conform reproduce: --fences: conform reproduce certifies the store alone"},
		{[]string{"CONFORM_REPRO=v1;seed=1;row=adm-try;fences=self"}, []string{"run"}, "conform run: CONFORM_REPRO names a run of the fences (self), not of a store; run it with: conform reproduce 'v1;seed=1;row=adm-try;fences=self'"},
	}
	for _, c := range cases {
		t.Run(strings.Join(append(c.env, c.args...), " "), func(t *testing.T) {
			cwd := t.TempDir()
			r := runConform(t, cwd, c.env, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.msg) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("stderr %q, stdout %q; want the one line %q", r.stderr, r.stdout, c.msg)
			}
			if es, _ := os.ReadDir(cwd); len(es) > 0 {
				t.Errorf("a refused run left %v", es)
			}
		})
	}
	if r := conform(t, "run", "-h"); r.code != 0 || strings.Contains(r.stdout, "-fences") {
		t.Errorf("run's help shows the fences' flags: exit %d\n%s", r.code, r.stdout)
	}
}

// TestFencesCommand runs the admission chapter through conform fences:
// over conform's own fences every row passes, in reports of its own apart
// from a store's; over a helper with a planted bug, driven through the
// helper protocol as any other implementation would be, the rows that bug
// breaks fail under their obligation, in every report, with a repro line
// that names the helper and replays the failure through conform
// reproduce.
func TestFencesCommand(t *testing.T) {
	cwd := t.TempDir()
	r := conformIn(t, cwd, "fences", "--seed", "11")
	if r.code != 0 {
		t.Fatalf("own fences: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "conform "+engine.Version+": certifying fences:self (seed 11)\n") ||
		!strings.Contains(r.stdout, "PASS  Realm admission fences") || !strings.Contains(r.stdout, "\nCONFORMANT: 22 rows passed") {
		t.Errorf("own fences: stdout lacks the header, the live lines or the summary:\n%s", r.stdout)
	}
	dir := filepath.Join(cwd, engine.FencesReportDir)
	if _, err := os.Stat(filepath.Join(cwd, "conform-report")); err == nil {
		t.Error("conform fences wrote into a store's report directory")
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel := run.Selected()
	if want := len(fences.Rows()); len(sel) != want || len(run.Rows) != want || run.Verdict() != reports.VerdictConformant {
		t.Fatalf("own fences: %d rows listed, %d selected, verdict %s; want the %d admission rows, conformant", len(run.Rows), len(sel), run.Verdict(), want)
	}
	if run.Seed != 11 || run.Store != "fences:self" {
		t.Errorf("own fences: seed %d, store %q; want 11, fences:self", run.Seed, run.Store)
	}
	for _, row := range sel {
		if row.Chapter != "admission" || !row.Certified() {
			t.Errorf("row %s/%s: %s %v", row.Chapter, row.ID, row.Status, row.NotExercised)
		}
	}
	checkVerdictEverywhere(t, dir, "conformant", "conformant")
	checkJUnitCount(t, dir, len(run.Rows), 0)

	// The broken helper: the command's own binary, its helper switched to
	// a bug that takes shared locks where a guard needs an exclusive one.
	bug := []string{"CONFORM_FENCES_BUG=shared-guard"}
	helper := "exec:" + binary
	r = conformEnv(t, bug, "fences", "--fences", helper, "--report-dir", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "NOT CONFORMANT") {
		t.Fatalf("broken fences: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err = engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[reports.RowID]reports.ObligationID{}
	repro := map[reports.RowID]string{}
	for _, row := range run.Selected() {
		if row.Status == reports.StatusFailed && len(row.Failures) > 0 {
			failed[row.ID] = row.Failures[0].Obligation
			repro[row.ID] = row.Repro
			if !strings.HasPrefix(row.Repro, "conform reproduce 'v1;seed=") || !strings.Contains(row.Repro, ";row=adm-") ||
				!strings.Contains(row.Repro, ";fences=exec%3A") || strings.Contains(row.Repro, "store=") || strings.Contains(row.Repro, "go test") {
				t.Errorf("row %s: repro %q does not name the row and the helper alone, through conform reproduce", row.ID, row.Repro)
			}
		}
	}
	for id, ob := range map[reports.RowID]reports.ObligationID{"adm-exclusive-shared": "adm:exclusion", "adm-exclusive-exclusive": "adm:exclusion", "adm-try": "adm:bound"} {
		if failed[id] != ob {
			t.Errorf("broken fences: row %s failed under %q, want %s (failed: %v)", id, failed[id], ob, failed)
		}
	}
	if _, ok := failed["adm-mode"]; ok {
		t.Errorf("broken fences: row adm-mode failed, which the bug does not break")
	}
	checkVerdictEverywhere(t, dir, "not-conformant", "not conformant")
	checkJUnitCount(t, dir, len(run.Rows), len(failed))
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "adm:exclusion") {
		t.Error("report.md does not name adm:exclusion")
	}

	// The repro line runs the failure again, through the fences run: the
	// row fails as it did over the broken helper, and passes once the
	// helper is mended.
	tok := strings.TrimSuffix(strings.TrimPrefix(repro["adm-try"], "conform reproduce '"), "'")
	again, _ := runReportEnv(t, bug, 1, "reproduce", tok)
	if sel := again.Selected(); len(sel) != 1 || sel[0].ID != "adm-try" || sel[0].Status != reports.StatusFailed || sel[0].Failures[0].Obligation != "adm:bound" || again.Seed != run.Seed {
		t.Errorf("reproduce %q: %+v, want row adm-try alone, failed under adm:bound, seed %d", tok, sel, run.Seed)
	}
	if mended, _ := runReportEnv(t, nil, 0, "reproduce", tok); mended.Store != "fences:"+helper {
		t.Errorf("reproduce over the mended helper: store %q, want fences:%s", mended.Store, helper)
	}
	// A repro written before the fences had their own command names an
	// admission row alone, and runs over conform's own fences.
	old, _ := runReportEnv(t, nil, 0, "reproduce", "v1;seed=3;row=adm-try")
	if sel := old.Selected(); len(sel) != 1 || sel[0].ID != "adm-try" || !sel[0].Certified() || old.Store != "fences:self" {
		t.Errorf("an old repro of adm-try: store %q, rows %+v", old.Store, sel)
	}

	// The label filter selects among the fences' rows.
	some, _ := runReportEnv(t, nil, 0, "fences", "--label-filter", "adm:bound")
	for _, row := range some.Selected() {
		if !strings.Contains(" "+strings.Join(obIDs(row.Obligations), " ")+" ", " adm:bound ") {
			t.Errorf("--label-filter adm:bound selected row %s %v", row.ID, row.Obligations)
		}
	}
	if len(some.Selected()) == 0 || len(some.Selected()) == len(some.Rows) {
		t.Errorf("--label-filter adm:bound selected %d of %d rows", len(some.Selected()), len(some.Rows))
	}

	// A helper that is not there is the chapter's finding, not a crash.
	r = conform(t, "fences", "--label-filter", "row:adm-try", "--fences", "exec:/nonexistent/helper", "--report-dir", dir)
	if r.code != 1 || strings.Contains(r.stderr, "panic:") {
		t.Errorf("missing helper: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"fences", "--fences", "exec:"}, "exec:PROGRAM"},
		{[]string{"fences", "--label-filter", "ob:5"}, "selects no row"},
		{[]string{"fences", "--rows", "kill"}, "'conform run' runs it"},
		{[]string{"fences", "--store", "reference:"}, "flag provided but not defined: -store"},
		{[]string{"reproduce", "v1;seed=1;row=adm-try;fences=self;fp=commit-locked%3Dreturn%28true%29"}, "arms no failpoint"},
		{[]string{"reproduce", "--fences", "self", "v1;seed=1;row=adm-try;fences=exec%3Ahelper"}, `--fences "self" conflicts with the repro string`},
		{[]string{"fences", "extra"}, `unexpected argument "extra"`},
	} {
		cwd := t.TempDir()
		r := conformIn(t, cwd, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.msg) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line saying %q", c.args, r.code, r.stderr, c.msg)
		}
		if es, _ := os.ReadDir(cwd); len(es) > 0 {
			t.Errorf("%q: a refused run left %v", c.args, es)
		}
	}
}

func obIDs(ids []reports.ObligationID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// checkJUnitCount checks that junit.xml in dir has tests tests, failures
// of them failed.
func checkJUnitCount(t *testing.T, dir string, tests, failures int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(raw, &suites); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if suites.Tests != tests || suites.Failures != failures {
		t.Errorf("junit.xml: %d tests, %d failures; want %d, %d", suites.Tests, suites.Failures, tests, failures)
	}
}

// TestFencesInterruptHasNoVerdict interrupts a fences run whose helper
// never says it is ready: the reports are written with every row not run,
// and every output says the run was interrupted, with no verdict.
func TestFencesInterruptHasNoVerdict(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	live := startLive(t, "fences", "--fences", "exec:sleep 3600", "--timeout", "5s", "--report-dir", dir)
	if line, ok := live.next(); !ok || !strings.HasPrefix(line, "conform "+engine.Version+": certifying fences:exec:sleep 3600") {
		live.cmd.Process.Kill()
		live.cmd.Wait()
		t.Fatalf("the run's first line is %q, want its header\n%s", line, live.stderr.String())
	}
	time.Sleep(300 * time.Millisecond) // into the first row, waiting on the helper
	stdout := live.interruptExitsOne(t)
	if !strings.Contains(stdout, "\nINTERRUPTED, NO VERDICT: ") || !strings.Contains(live.stderr.String(), "conform fences: interrupted") {
		t.Errorf("the outputs do not say the run was interrupted, with no verdict:\n%s\n%s", stdout, live.stderr.String())
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("no report after an interrupt: %v", err)
	}
	if c := run.Counts(); !run.Interrupted || c[reports.StatusPassed] != 0 || c[reports.StatusFailed] != 0 {
		t.Errorf("report.json: interrupted %v, counts %v; want interrupted, none passed or failed", run.Interrupted, c)
	}
	checkVerdictEverywhere(t, dir, "interrupted", "interrupted, no verdict")
}

// TestFencesPythonHelper certifies another implementation through the
// helper protocol: the Python helper written from the protocol document
// passes every row of conform fences, and the reports name it.
func TestFencesPythonHelper(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("every row passing needs root (CI runs as root)")
	}
	// The system's interpreter, and the script where nobody can read it:
	// some rows run a participant as nobody.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no %s (scripts/test.sh installs it): %v", python, err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "internal", "chapter", "fences", "testdata", "helper.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "conform-fences-python-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "helper.py")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	helper := "exec:" + python + " " + path
	run, _ := runReportEnv(t, nil, 0, "fences", "--fences", helper)
	if run.Store != "fences:"+helper || len(run.Selected()) != len(fences.Rows()) || run.Verdict() != reports.VerdictConformant {
		t.Errorf("store %q, %d rows selected, verdict %s; want fences:%s, the %d rows, conformant", run.Store, len(run.Selected()), run.Verdict(), helper, len(fences.Rows()))
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

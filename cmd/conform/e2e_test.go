package main_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/internal/reportdir"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// binary is the conform command built once for these tests, with the
// conformcanary tag so that the canary stores can be named by URL.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conform-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "conform")
	build := exec.Command("go", "build", "-tags", "conformcanary", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building conform: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// withoutConformEnv is this process's environment without any CONFORM_*
// variable, which the command would read.
func withoutConformEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONFORM_") {
			out = append(out, kv)
		}
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// conform runs the command with args, in an environment without any
// CONFORM_* variable of the caller's.
func conform(t *testing.T, args ...string) result {
	t.Helper()
	return conformEnv(t, nil, args...)
}

// conformIn runs the command with args in directory dir.
func conformIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runConform(t, dir, nil, args...)
}

// conformEnv runs the command with args and the CONFORM_* variables of env
// ("NAME=value"), in place of any of the caller's.
func conformEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runConform(t, t.TempDir(), env, args...)
}

func runConform(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(withoutConformEnv(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running conform %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

func TestRunReferenceIsConformant(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, "run", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "CONFORMANT") || !strings.Contains(r.stdout, "PASS  Stale fence") {
		t.Errorf("stdout lacks the live lines or the verdict:\n%s", r.stdout)
	}
	for _, f := range reportdir.Files {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report %s missing or empty: %v", f, err)
		}
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("report.json: %v", err)
	}
	want := map[reports.RowID]bool{}
	for _, id := range []reports.RowID{"acquire-empty", "reopen", "kill", "stale-fence", "takeover", "same-version", "retry", "rows", "independence", "stalled-commit"} {
		want[id] = true
	}
	// Every selected row: the exploration chapter is off by default, so
	// its row is listed, not selected.
	for _, row := range run.Selected() {
		if row.Status != reports.StatusPassed {
			t.Errorf("row %s: %s", row.ID, row.Status)
		}
		delete(want, row.ID)
	}
	if len(want) > 0 {
		t.Errorf("rows missing from report.json: %v", want)
	}
	if len(run.Rows) < 10 {
		t.Errorf("report.json has %d rows, want at least 10", len(run.Rows))
	}
	checkJUnitCount(t, dir, len(run.Rows), 0)
}

func TestBadInputExitsTwo(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"no command", nil, "usage: conform"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"run", "--frob"}, "flag provided but not defined: -frob"},
		{"bad label filter", []string{"run", "--label-filter", "row:kill &&"}, "label filter"},
		{"unknown row", []string{"run", "--rows", "nope"}, `unknown row "nope"`},
		{"malformed failpoint term", []string{"run", "--failpoint", "commit-locked=return("}, "--failpoint"},
		{"unknown failpoint", []string{"run", "--failpoint", "nowhere=return(true)"}, "nowhere"},
		{"unseeded failpoint term", []string{"run", "--failpoint", `commit-locked=50%return("crash")`}, "%"},
		{"unknown store", []string{"run", "--store", "mongo://x"}, `unknown store "mongo:"`},
		{"store URL without scheme", []string{"run", "--store", "nothing"}, "no scheme"},
		{"unwritable report dir", []string{"run", "--report-dir", filepath.Join(notDir, "sub")}, "--report-dir"},
		{"bad timeout", []string{"run", "--timeout", "-1s"}, "--timeout"},
		{"timeout below its floor", []string{"run", "--timeout", "999ms"}, "--timeout"},
		{"call timeout below its floor", []string{"run", "--call-timeout", "99ms"}, "--call-timeout"},
		{"negative call timeout", []string{"run", "--call-timeout", "-1s"}, "--call-timeout"},
		{"reproduce without a string", []string{"reproduce"}, "give the repro string"},
		{"malformed repro", []string{"reproduce", "v9;seed=1"}, "repro"},
		{"repro without seed", []string{"reproduce", "v1;row=kill"}, "no seed"},
		{"list with arguments", []string{"list", "x"}, "takes no arguments but -v"},
		{"failpoint with invalid UTF-8", []string{"run", "--failpoint", "commit-locked=return(\"\xff\")"}, "not valid UTF-8"},
		{"sleep that would wrap", []string{"run", "--failpoint", "commit-locked=sleep(9223372036855)"}, "longest sleep"},
		{"repro with invalid UTF-8", []string{"reproduce", "v1;seed=1;fp=commit-locked%3Dreturn%28%22%FF%22%29"}, "not valid UTF-8"},
		{"report dir holding other files", []string{"run", "--report-dir", filepath.Dir(notDir)}, "not conform's reports"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwd := t.TempDir()
			r := conformIn(t, cwd, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.msg) {
				t.Errorf("stderr does not say %q:\n%s", c.msg, r.stderr)
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
				t.Errorf("a Go panic reached the user:\n%s", r.stderr)
			}
			if es, _ := os.ReadDir(cwd); len(es) > 0 {
				t.Errorf("a refused run left %v behind", es)
			}
		})
	}
}

func TestListNamesRowsObligationsAndFailpoints(t *testing.T) {
	r := conform(t, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"row:stale-fence", "ob:5", "Fencing", "commit-locked", "wrap/commit-before-send", "reference:",
		"Host store chapter (label chapter:host-store; certified by 'conform run')",
		"Realm admission fences (label chapter:admission; certified by 'conform fences')", "row:adm-exclusive-shared", "row:adm-file-kinds", "adm:exclusion", "adm:permissions"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list does not mention %q:\n%s", want, r.stdout)
		}
	}
}

func TestRowsFlagRunsOnlyThoseRows(t *testing.T) {
	dir := t.TempDir()
	r := conform(t, "run", "--rows", "retry,rows", "--seed", "7", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Seed != 7 {
		t.Errorf("seed %d, want 7", run.Seed)
	}
	for _, row := range run.Rows {
		want := reports.StatusNotRun
		if row.ID == "retry" || row.ID == "rows" {
			want = reports.StatusPassed
		}
		if row.Status != want {
			t.Errorf("row %s: %s, want %s", row.ID, row.Status, want)
		}
	}
}

// TestEnvConflictingWithFlagExitsTwo: a CONFORM_* variable that conflicts
// with a flag given is refused before any row runs, naming both.
func TestEnvConflictingWithFlagExitsTwo(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		env  string
		args []string
		msg  string
	}{
		{"CONFORM_SEED=1", []string{"run", "--seed", "2", "--report-dir", dir}, "CONFORM_SEED=1 conflicts with --seed 2"},
		{"CONFORM_REPORT_DIR=" + dir, []string{"run", "--report-dir", filepath.Join(dir, "other")}, "CONFORM_REPORT_DIR=" + strconv.Quote(dir) + " conflicts with --report-dir"},
		{"CONFORM_LABEL_FILTER=ob:1", []string{"run", "--label-filter", "ob:5"}, `CONFORM_LABEL_FILTER="ob:1" conflicts with --label-filter "ob:5"`},
		{"CONFORM_REPRO=v1;seed=42;row=kill", []string{"run", "--rows", "retry"}, `--rows "retry" conflicts with CONFORM_REPRO (row=kill)`},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			r := conformEnv(t, []string{c.env}, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if want := "conform run: " + c.msg; !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want the one line %q...", r.stderr, want)
			}
			if r.stdout != "" {
				t.Errorf("the run went on:\n%s", r.stdout)
			}
		})
	}
}

// TestEnvFillsFlagsNotGiven: the CONFORM_* variables set what no flag
// gave, and the header says so.
func TestEnvFillsFlagsNotGiven(t *testing.T) {
	dir := t.TempDir()
	r := conformEnv(t, []string{"CONFORM_SEED=13", "CONFORM_REPORT_DIR=" + dir}, "run", "--rows", "acquire-empty")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "seed 13; from the environment: CONFORM_SEED, CONFORM_REPORT_DIR") {
		t.Errorf("the header does not name the settings from the environment:\n%s", r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("no report in CONFORM_REPORT_DIR: %v", err)
	}
	if run.Seed != 13 {
		t.Errorf("seed %d, want CONFORM_SEED's 13", run.Seed)
	}
	// The header keeps what the flags set beside what the environment did.
	r = conformEnv(t, []string{"CONFORM_SEED=13"}, "run", "--shard", "1/2", "--explore-parallel", "2", "--report-dir", "-")
	if r.code != 0 || !strings.Contains(r.stdout, "(seed 13, shard 1/2, exploration histories 2 at once; from the environment: CONFORM_SEED)") {
		t.Errorf("exit %d; the header does not name the shard, the histories at once and the environment:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestHostsFences(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r := conform(t, "hosts-fences", "/dev/shm", wd)
	if r.code != 0 || !strings.Contains(r.stdout, "/dev/shm\thosts fences\ttmpfs") {
		t.Errorf("tmpfs and the work tree: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = conform(t, "hosts-fences", "/dev/shm", "/proc")
	if r.code != 1 || !strings.Contains(r.stdout, "/proc\thosts no fence\tproc") {
		t.Errorf("/proc: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = conform(t, "hosts-fences", "/no/such/dir")
	if r.code != 2 {
		t.Errorf("a missing directory: exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestStoreTextIsEscapedInReports(t *testing.T) {
	dir := t.TempDir()
	r := conform(t, "run", "--store", "hostile:", "--rows", "rows", "--report-dir", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte("alert(")) {
		t.Fatalf("the store's error text is not in report.html at all")
	}
	// In Markdown, text inside fenced code blocks is shown verbatim, never
	// rendered: only what stands outside them must be escaped.
	for name, b := range map[string][]byte{"report.html": html, "report.md outside code blocks": outsideFences(md)} {
		if bytes.Contains(b, []byte("<script>")) {
			t.Errorf("%s carries the store's <script> unescaped", name)
		}
		if bytes.ContainsAny(b, "\x1b\x00") {
			t.Errorf("%s carries a raw control byte from the store", name)
		}
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range run.Rows {
		if row.ID == "rows" && (row.Status != reports.StatusFailed || len(row.Failures) == 0 || row.Failures[0].Obligation != "ob:errors") {
			t.Errorf("row rows: %s %+v, want failed under ob:errors (an error outside the contract)", row.Status, row.Failures)
		}
	}
}

// outsideFences drops every fenced code block (``` or longer) of a
// Markdown text.
func outsideFences(md []byte) []byte {
	var out []byte
	fence := ""
	for _, line := range bytes.SplitAfter(md, []byte("\n")) {
		trimmed := strings.TrimSpace(string(line))
		switch {
		case fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = strings.TrimRight(trimmed, "abcdefghijklmnopqrstuvwxyz")
		case fence != "" && trimmed == fence:
			fence = ""
		case fence == "":
			out = append(out, line...)
		}
	}
	return out
}

func TestCanaryFailsAndReproduces(t *testing.T) {
	dir := t.TempDir()
	// The host store chapter alone: a renew that never returns FencedOut
	// also misleads the worker chapter's takeover rows, rightly.
	r := conform(t, "run", "--store", "canary:renew-never-fenced", "--seed", "11", "--label-filter", "chapter:host-store", "--report-dir", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "FAIL  Stale fence") || !strings.Contains(r.stdout, "NOT CONFORMANT") {
		t.Errorf("stdout does not show the failing row and the verdict:\n%s", r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	var failed *reports.Row
	for i, row := range run.Rows {
		if row.Status == reports.StatusFailed {
			if row.ID != "stale-fence" {
				t.Errorf("row %s failed too: %s", row.ID, textsafe.Clip(row.Failures[0].Message, 300))
			}
			failed = &run.Rows[i]
		}
	}
	if failed == nil || len(failed.Failures) == 0 || failed.Failures[0].Obligation != "ob:fence" {
		t.Fatalf("want stale-fence failed under ob:fence, got %v", failed != nil)
	}
	for _, f := range []string{"junit.xml", "report.md", "report.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("Stale fence")) || !bytes.Contains(b, []byte("ob:fence")) {
			t.Errorf("%s does not name the failing row and its obligation", f)
		}
	}
	// The repro line re-runs exactly that row, with the same verdict.
	line := failed.Repro
	start := strings.Index(line, "'")
	end := strings.Index(line[start+1:], "'")
	if start < 0 || end < 0 || !strings.HasPrefix(line, "conform reproduce '") {
		t.Fatalf("repro line %q is not a conform reproduce command", line)
	}
	token := line[start+1 : start+1+end]
	dir2 := t.TempDir()
	r = conform(t, "reproduce", token, "--report-dir", dir2)
	if r.code != 1 {
		t.Fatalf("reproduce: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	again, err := engine.ReadReport(dir2)
	if err != nil {
		t.Fatal(err)
	}
	if again.Seed != 11 || again.Store != "canary:renew-never-fenced" {
		t.Errorf("reproduce ran seed %d on %q, want 11 on canary:renew-never-fenced", again.Seed, again.Store)
	}
	for _, row := range again.Rows {
		want := reports.StatusNotRun
		if row.ID == "stale-fence" {
			want = reports.StatusFailed
		}
		if row.Status != want {
			t.Errorf("reproduce: row %s %s, want %s", row.ID, row.Status, want)
		}
	}
}

// TestInterruptWritesReports sends SIGINT once the first row has passed
// whole, with every later commit held at commit-locked until its spec
// ends, so that the run cannot finish before the signal. It expects the
// reports all the same, with the unfinished rows not run and every output
// saying the run was interrupted, with no verdict.
func TestInterruptWritesReports(t *testing.T) {
	dir := t.TempDir()
	live := startLive(t, "run", "--report-dir", dir, "--failpoint", `commit-locked=sleep("1h")`)
	// The first row, acquire-empty, commits nothing; the second, reopen,
	// commits at once and is held there. A spec's line is written by a
	// reporting node that an interrupt can still catch, so the first spec
	// is final only once the second spec's line is out: then the first
	// row has passed, and no later row can end before the signal.
	for passes := 0; passes < 2; {
		line, ok := live.next()
		if !ok {
			break
		}
		switch {
		case strings.HasPrefix(line, "PASS  Acquire on an empty realm"):
			passes++
		case strings.HasPrefix(line, "PASS") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "N/E") || strings.HasPrefix(line, "SKIP"):
			live.cmd.Process.Kill()
			live.cmd.Wait()
			t.Fatalf("a row other than acquire-empty passed, or a spec did not pass, before the interrupt:\n%s", live.stdout())
		}
	}
	stdout := live.interruptExitsOne(t)
	if !strings.Contains(live.stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", live.stderr.String())
	}
	if !strings.Contains(stdout, "\nINTERRUPTED, NO VERDICT: ") {
		t.Errorf("stdout does not say the run was interrupted, with no verdict:\n%s", stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("no report after an interrupt: %v", err)
	}
	if !run.Interrupted {
		t.Error("report.json does not mark the run interrupted")
	}
	c := run.Counts()
	if c[reports.StatusNotRun] == 0 || c[reports.StatusPassed] != 1 || c[reports.StatusFailed] != 0 {
		t.Errorf("selected rows' counts %v: want acquire-empty passed before the interrupt, none failed, the rest not run", c)
	}
	checkVerdictEverywhere(t, dir, "interrupted", "interrupted, no verdict")
}

// reportSet reads the four reports in dir; a missing one is absent from
// the map.
func reportSet(t *testing.T, dir string) map[string]string {
	t.Helper()
	set := map[string]string{}
	for _, f := range reportdir.Files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			set[f] = string(b)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return set
}

// TestInterruptDuringReportWrite holds the report write (the test hook of
// the conformcanary build), signals the command there, and lets the write
// go on: the report directory then holds the old set or the new set, never
// a mix, and stdout says which. Every row had ended, so the run is
// complete: the exit code is its verdict's, no output says interrupted,
// and stderr says the signal came after the last row.
func TestInterruptDuringReportWrite(t *testing.T) {
	for _, c := range []struct {
		name string
		sigs []os.Signal
	}{
		{"SIGINT", []os.Signal{syscall.SIGINT}},
		{"SIGTERM", []os.Signal{syscall.SIGTERM}},
		{"double Ctrl-C", []os.Signal{syscall.SIGINT, syscall.SIGINT}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "reports")
			if r := conform(t, "run", "--rows", "acquire-empty", "--seed", "111111", "--report-dir", dir); r.code != 0 {
				t.Fatalf("the old set: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			old := reportSet(t, dir)
			if len(old) != len(reportdir.Files) {
				t.Fatalf("the old set has %d files", len(old))
			}

			reachedR, reachedW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			releaseR, releaseW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer reachedR.Close()
			defer releaseW.Close()
			cmd := exec.Command(binary, "run", "--rows", "acquire-empty", "--seed", "222222", "--report-dir", dir)
			cmd.Dir = t.TempDir()
			cmd.Env = append(withoutConformEnv(), "CONFORM_TEST_REPORT_DELAY=3,4")
			cmd.ExtraFiles = []*os.File{reachedW, releaseR}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reachedW.Close()
			releaseR.Close()
			if line, err := bufio.NewReader(reachedR).ReadString('\n'); line != "reached\n" {
				cmd.Wait()
				t.Fatalf("the command did not stop at its report write (%q, %v)\n%s\n%s", line, err, out.String(), errb.String())
			}
			if got := reportSet(t, dir); !maps.Equal(got, old) {
				t.Fatal("the report directory changed before the write was let go")
			}
			for _, sig := range c.sigs {
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := releaseW.WriteString("after-signal\n"); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			stdout, stderr := out.String(), errb.String()
			if code != 0 {
				t.Errorf("exit %d, want 0 (complete and conformant)\n%s\n%s", code, stdout, stderr)
			}
			if strings.Contains(strings.ToLower(stdout), "interrupted") || strings.Contains(strings.ToLower(stderr), "interrupted") {
				t.Errorf("stdout or stderr says interrupted, of a complete run:\n%s\n%s", stdout, stderr)
			}
			if !strings.Contains(stderr, "a signal came after the last row had ended") {
				t.Errorf("stderr does not say the signal came after the last row:\n%s", stderr)
			}
			got := reportSet(t, dir)
			claimed := strings.Contains(stdout, "reports: "+dir+"/{")
			switch {
			case maps.Equal(got, old):
				if claimed || !strings.Contains(stdout, "NOT written") {
					t.Errorf("the old set is there, but stdout does not say the reports were not written:\n%s", stdout)
				}
			case len(got) == len(reportdir.Files):
				for f, b := range got {
					if !strings.Contains(b, "222222") || strings.Contains(b, "111111") {
						t.Errorf("%s is not of the new run: a mix of sets", f)
					}
				}
				if run, err := engine.ReadReport(dir); err != nil || run.Interrupted || !run.Verdict().Passing() {
					t.Errorf("the new set's report.json (%v) is not of a complete, passing run", err)
				}
				if !claimed {
					t.Errorf("the new set is there, but stdout does not say so:\n%s", stdout)
				}
			default:
				t.Errorf("the report directory holds %d of the %d reports", len(got), len(reportdir.Files))
			}
			if es, _ := os.ReadDir(parent); len(es) != 1 {
				t.Errorf("beside the reports: %v", es)
			}
		})
	}
}

// TestClosedStdoutStillWritesReports runs the command with a stdout whose
// reader is gone (as in `conform run | head -1`): the run goes on, writes
// its reports and exits with its verdict's code, not killed by SIGPIPE.
func TestClosedStdoutStillWritesReports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(binary, "run", "--rows", "reopen", "--report-dir", dir)
	cmd.Dir = t.TempDir()
	cmd.Env = withoutConformEnv()
	cmd.Stdout = w
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit %v, want 0 (conformant)\n%s", err, errb.String())
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("no reports: %v", err)
	}
	if v := run.Verdict(); v != reports.VerdictConformant {
		t.Errorf("verdict %s", v)
	}
	if got := reportSet(t, dir); len(got) != len(reportdir.Files) {
		t.Errorf("%d of the %d reports written", len(got), len(reportdir.Files))
	}
}

// oneLine checks that s is exactly one line that starts with prefix and
// carries no control byte.
func oneLine(t *testing.T, what, s, prefix string) {
	t.Helper()
	if !strings.HasPrefix(s, prefix) || strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("%s %q: want one line starting %q", what, s, prefix)
	}
	if strings.ContainsAny(strings.TrimSuffix(s, "\n"), "\x00\x1b\r\n") {
		t.Errorf("%s carries a raw control byte: %q", what, s)
	}
}

// TestReproduceStoreThisCommandCannotOpen: a repro that names a store this
// command does not open (one its author tests under go test) is refused
// with the go test form to use instead, in one line, prefixed by the
// command that refused it.
func TestReproduceStoreThisCommandCannotOpen(t *testing.T) {
	for _, c := range []struct {
		name, token string
		env         []string
		args        []string
		prefix      string
	}{
		{name: "no scheme", token: "v1;seed=5;row=kill;store=boltstore", args: []string{"reproduce"}, prefix: "conform reproduce: "},
		{name: "unknown scheme", token: "v1;seed=5;row=kill;store=bolt%3A%2Fdata", args: []string{"reproduce"}, prefix: "conform reproduce: "},
		{name: "CONFORM_REPRO", token: "v1;seed=5;row=kill;store=boltstore", env: []string{"CONFORM_REPRO=v1;seed=5;row=kill;store=boltstore"}, args: []string{"run"}, prefix: "conform run: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.env == nil {
				args = append(args, c.token)
			}
			cwd := t.TempDir()
			r := runConform(t, cwd, c.env, args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			oneLine(t, "stderr", r.stderr, c.prefix)
			if want := "CONFORM_REPRO='" + c.token + "' go test ./..."; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not give the go test form %q:\n%s", want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("the run went on:\n%s", r.stdout)
			}
			if es, _ := os.ReadDir(cwd); len(es) > 0 {
				t.Errorf("a refused run left %v behind", es)
			}
		})
	}
}

// TestReproStoreAgainstStoreFlag: a repro names the store it failed on;
// a --store that says otherwise is refused, so that no report names one
// store for another's run; the same store is accepted.
func TestReproStoreAgainstStoreFlag(t *testing.T) {
	const tok = "v1;seed=5;row=reopen;store=canary%3Arenew-never-fenced"
	r := conformEnv(t, []string{"CONFORM_REPRO=" + tok}, "run", "--store", "reference:")
	if r.code != 2 {
		t.Fatalf("CONFORM_REPRO against --store: exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	oneLine(t, "stderr", r.stderr, `conform run: --store "reference:" conflicts with CONFORM_REPRO (store=canary:renew-never-fenced)`)
	r = conform(t, "reproduce", tok, "--store", "reference:")
	if r.code != 2 {
		t.Fatalf("reproduce against --store: exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	oneLine(t, "stderr", r.stderr, `conform reproduce: --store "reference:" conflicts with the repro string (store=canary:renew-never-fenced)`)

	dir := t.TempDir()
	r = conform(t, "reproduce", "--store", "canary:renew-never-fenced", tok, "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("the same store: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if run, err := engine.ReadReport(dir); err != nil || run.Store != "canary:renew-never-fenced" {
		t.Errorf("report of store %v (%v), want canary:renew-never-fenced", run, err)
	}
}

// TestReproduceFlagsAroundTheString: reproduce takes its flags before and
// after the repro string; one equal to what the string says is accepted,
// one that says otherwise refused in one line.
func TestReproduceFlagsAroundTheString(t *testing.T) {
	dir := t.TempDir()
	r := conform(t, "reproduce", "--store", "canary:renew-never-fenced", "--report-dir", dir, "v1;seed=11;row=stale-fence")
	if r.code != 1 {
		t.Fatalf("--store before the string: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Store != "canary:renew-never-fenced" || run.Seed != 11 || run.Counts()[reports.StatusFailed] != 1 {
		t.Errorf("reproduce ran seed %d on %q with counts %v; want seed 11 on the canary, stale-fence failed", run.Seed, run.Store, run.Counts())
	}

	const fp = "commit-locked=sleep(1)"
	const withFP = "v1;seed=11;row=reopen;fp=commit-locked%3Dsleep%281%29"
	for _, args := range [][]string{
		{"reproduce", "--seed", "11", "v1;seed=11;row=reopen"},
		{"reproduce", "v1;seed=11;row=reopen", "--seed", "11"},
		{"reproduce", "--failpoint", fp, withFP},
		{"reproduce", withFP, "--failpoint", fp},
	} {
		dir := t.TempDir()
		r := conform(t, append(args, "--report-dir", dir)...)
		if r.code != 0 {
			t.Errorf("%q: exit %d, want 0\n%s\n%s", args, r.code, r.stdout, r.stderr)
			continue
		}
		run, err := engine.ReadReport(dir)
		if err != nil {
			t.Fatal(err)
		}
		if run.Seed != 11 || (args[2] == fp || args[3] == fp) != slices.Equal(run.Failpoints, []string{fp}) {
			t.Errorf("%q: ran seed %d with failpoints %q", args, run.Seed, run.Failpoints)
		}
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"reproduce", "--seed", "12", "v1;seed=11;row=reopen"}, "conform reproduce: --seed 12 conflicts with the repro string (seed=11)"},
		{[]string{"reproduce", "v1;seed=11;row=reopen", "--seed", "12"}, "conform reproduce: --seed 12 conflicts with the repro string (seed=11)"},
		{[]string{"reproduce", "--failpoint", fp, "v1;seed=11;row=reopen"}, "conform reproduce: --failpoint " + fp + " conflicts with the repro string"},
		{[]string{"reproduce", withFP, "--failpoint", "commit-locked=sleep(2)"}, "conform reproduce: --failpoint commit-locked=sleep(2) conflicts with the repro string"},
		{[]string{"reproduce", "v1;seed=11", "v1;seed=12"}, "conform reproduce: takes one repro string"},
		{[]string{"reproduce", "--rows", "kill"}, "conform reproduce: give the repro string"},
	} {
		cwd := t.TempDir()
		r := conformIn(t, cwd, c.args...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s\n%s", c.args, r.code, r.stdout, r.stderr)
			continue
		}
		oneLine(t, fmt.Sprintf("%q: stderr", c.args), r.stderr, c.msg)
		if es, _ := os.ReadDir(cwd); len(es) > 0 || r.stdout != "" {
			t.Errorf("%q: the refused run went on: %v\n%s", c.args, es, r.stdout)
		}
	}
}

// TestTimeoutHasAFloor: a --timeout below a second is refused in one
// line, before any row runs; a second is taken.
func TestTimeoutHasAFloor(t *testing.T) {
	for _, d := range []string{"1ms", "999ms", "0s"} {
		cwd := t.TempDir()
		r := conformIn(t, cwd, "run", "--timeout", d)
		if r.code != 2 {
			t.Errorf("--timeout %s: exit %d, want 2\n%s\n%s", d, r.code, r.stdout, r.stderr)
			continue
		}
		oneLine(t, "--timeout "+d+": stderr", r.stderr, "conform run: --timeout "+d+" is below the floor of 1s")
		if es, _ := os.ReadDir(cwd); len(es) > 0 || r.stdout != "" {
			t.Errorf("--timeout %s: the refused run went on", d)
		}
	}
	if r := conform(t, "run", "--timeout", "1s", "--rows", "acquire-empty", "--report-dir", t.TempDir()); r.code != 0 {
		t.Errorf("--timeout 1s: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestOutsideTextIsEscapedOnTheConsole: every line the command prints that
// carries text from outside (a store's error, a URL, a path, a flag)
// shows its control characters escaped, and a newline in it starts no
// line of its own.
func TestOutsideTextIsEscapedOnTheConsole(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"the store's open error", []string{"run", "--store", "hostile:open-error"}},
		{"the store's realm error", []string{"run", "--store", "hostile:realm-error"}},
		{"a URL", []string{"run", "--store", "canary:\x1b[2J\nconform run: forged"}},
		{"a report directory", []string{"run", "--report-dir", filepath.Join(file, "\x1b[31m\nconform run: forged")}},
		{"an unknown flag", []string{"run", "--\x1b[31m\nforged"}},
		{"a repro's store", []string{"reproduce", "v1;seed=1;store=no%1B%0Ascheme"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := conform(t, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			oneLine(t, "stderr", r.stderr, "conform "+c.args[0]+": ")
		})
	}
	// A store URL with an escape: the run's header and every other line
	// show it escaped.
	r := conform(t, "run", "--store", "hostile:\x1b[31m", "--rows", "retry", "--report-dir", "-")
	if r.code != 0 {
		t.Fatalf("hostile store URL: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b") || !strings.Contains(r.stdout, `certifying hostile:\x1b[31m`) {
		t.Errorf("the header does not show the URL escaped:\n%q", r.stdout)
	}
}

// TestUserFailpointIsNamedInTheFinding: a crash that the user's own
// --failpoint injects fails the row whose commit it hits; the finding says
// that it followed a failpoint the user armed.
func TestUserFailpointIsNamedInTheFinding(t *testing.T) {
	dir := t.TempDir()
	const fp = `commit-locked=1*return("crash")`
	r := conform(t, "run", "--rows", "reopen", "--failpoint", fp, "--report-dir", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	const said = "followed a failpoint armed by the user"
	if !strings.Contains(r.stdout, said) {
		t.Errorf("the console does not say the failure %s:\n%s", said, r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range run.Rows {
		for _, f := range row.Failures {
			n++
			if !strings.Contains(f.Message, said) || !strings.Contains(f.Message, fp) {
				t.Errorf("row %s: finding %q does not say it %s (%s)", row.ID, f.Message, said, fp)
			}
		}
	}
	if n == 0 {
		t.Fatal("no finding at all")
	}
	for _, f := range []string{"report.md", "report.html", "junit.xml"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); !strings.Contains(string(b), said) {
			t.Errorf("%s does not say the failure %s", f, said)
		}
	}
}

// TestDocsFailpointExample runs the --failpoint example of docs/command.md
// over the reference store, which must pass it.
func TestDocsFailpointExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/command.md")
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, line := range strings.Split(string(b), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "conform run ") && strings.Contains(l, "--failpoint '") {
			example = l
			break
		}
	}
	if example == "" {
		t.Fatal("docs/command.md shows no `conform run ... --failpoint '...'` example")
	}
	args := shellWords(t, strings.TrimPrefix(example, "conform "))
	r := conform(t, append(args, "--report-dir", t.TempDir())...)
	if r.code != 0 {
		t.Errorf("the example %q of docs/command.md: exit %d, want 0\n%s\n%s", example, r.code, r.stdout, r.stderr)
	}
}

// shellWords splits s at spaces outside single quotes, as a shell would
// for the examples of the docs.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

func TestLargestSeedEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	const seed = "18446744073709551615"
	r := conform(t, "run", "--seed", seed, "--rows", "reopen", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Count(r.stdout, seed) < 2 {
		t.Errorf("the header and the summary do not both show seed %s:\n%s", seed, r.stdout)
	}
	for _, f := range reportdir.Files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), seed) {
			t.Errorf("%s does not show seed %s (%v)", f, seed, err)
		}
	}
	run, err := engine.ReadReport(dir)
	if err != nil || run.Seed != 1<<64-1 {
		t.Fatalf("report.json seed = %v (%v)", run, err)
	}
}

// TestStoreWithoutSitesIsNotCertified: a correct store that calls no
// in-store site is not conformant by default; declared, it is conformant
// without in-store faults, and every output says so.
func TestStoreWithoutSitesIsNotCertified(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, "run", "--store", "canary:no-sites", "--report-dir", dir)
	if r.code != 1 {
		t.Fatalf("undeclared: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "NOT CONFORMANT") || !strings.Contains(r.stdout, "never reached an in-store site") {
		t.Errorf("undeclared: the summary does not say why:\n%s", r.stdout)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict() != reports.VerdictNotConformant || run.Counts()[reports.StatusFailed] != 0 {
		t.Errorf("undeclared: verdict %s with counts %v, want not conformant with no row failed", run.Verdict(), run.Counts())
	}
	checkVerdictEverywhere(t, dir, "not-conformant", "not conformant")
	// Rows that passed what ran but left parts not exercised are counted
	// as passed, and each summary says how many of them did.
	inPart := 0
	for _, row := range run.Selected() {
		if row.Status == reports.StatusPassed && !row.Certified() {
			inPart++
		}
	}
	if inPart == 0 {
		t.Errorf("undeclared: no row passed in part: %v", run.Counts())
	}
	note := fmt.Sprintf("%d rows passed (%d of them in part), ", run.Counts()[reports.StatusPassed], inPart)
	if !strings.Contains(r.stdout, note) {
		t.Errorf("undeclared: the summary lacks %q:\n%s", note, r.stdout)
	}
	for _, f := range []string{"report.md", "report.html"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("(%d of them in part)", inPart); !strings.Contains(string(data), want) {
			t.Errorf("undeclared: %s lacks %q", f, want)
		}
	}

	r = conform(t, "run", "--store", "canary:no-sites", "--without-instore-faults", "--report-dir", dir)
	if r.code != 0 {
		t.Fatalf("declared: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "CONFORMANT WITHOUT IN-STORE FAULTS") {
		t.Errorf("declared: the summary lacks the verdict:\n%s", r.stdout)
	}
	run, err = engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !run.WithoutInStoreFaults || run.Verdict() != reports.VerdictConformantWithoutInStore {
		t.Errorf("declared: report.json verdict %s, declared %v", run.Verdict(), run.WithoutInStoreFaults)
	}
	checkVerdictEverywhere(t, dir, "conformant-without-instore-faults", "conformant without in-store faults")

	// The declaration changes nothing for a store that does reach the sites.
	r = conform(t, "run", "--without-instore-faults", "--report-dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "\nCONFORMANT:") {
		t.Errorf("reference, declared: exit %d\n%s", r.code, r.stdout)
	}
}

// checkVerdictEverywhere checks that report.json, report.md, report.html
// and junit.xml carry the same verdict.
func checkVerdictEverywhere(t *testing.T, dir, id, label string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if s := read("report.json"); !strings.Contains(s, `"verdict": "`+id+`"`) {
		t.Errorf("report.json lacks verdict %s", id)
	}
	if s := read("report.md"); !strings.Contains(strings.SplitN(s, "\n", 2)[0], ": "+label) {
		t.Errorf("report.md heads %q, want %q", strings.SplitN(s, "\n", 2)[0], label)
	}
	if s := read("report.html"); !strings.Contains(s, " "+label+"</span>") {
		t.Errorf("report.html does not head with %q", label)
	}
	if s := read("junit.xml"); !strings.Contains(s, `name="verdict" value="`+id+`"`) {
		t.Errorf("junit.xml lacks verdict %s", id)
	}
}

func TestEmptySelectionExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--label-filter", "row:kil"},
		{"run", "--rows", ",,,"},
		{"run", "--rows", "kill", "--label-filter", "chapter:long-run"},
	} {
		cwd := t.TempDir()
		r := conformIn(t, cwd, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s\n%s", args, r.code, r.stdout, r.stderr)
			continue
		}
		if !strings.Contains(r.stderr, "no row") {
			t.Errorf("%v: stderr does not say the selection is empty:\n%s", args, r.stderr)
		}
		if es, _ := os.ReadDir(cwd); len(es) > 0 {
			t.Errorf("%v: a refused run left %v", args, es)
		}
	}
	r := conform(t, "run", "--label-filter", "row:kil")
	if !strings.Contains(r.stderr, "row:kill") || !strings.Contains(r.stderr, "ob:5") {
		t.Errorf("the refusal does not list the labels that exist:\n%s", r.stderr)
	}
}

// TestRunLeavesNoRealm: a run over the file stores removes every realm it
// made, from the temporary directory and from a directory named to it,
// unless --keep-realms.
func TestRunLeavesNoRealm(t *testing.T) {
	for _, scheme := range []string{"sqlite", "appendonly+sqlite"} {
		t.Run(scheme, func(t *testing.T) {
			tmp := openTempDir(t)
			r := conformEnv(t, []string{"TMPDIR=" + tmp}, "run", "--store", scheme+":", "--report-dir", filepath.Join(t.TempDir(), "r"))
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if es, _ := os.ReadDir(tmp); len(es) > 0 {
				t.Errorf("the run left %d entries in $TMPDIR: %v", len(es), es)
			}
			dir := t.TempDir()
			r = conform(t, "run", "--store", scheme+":"+dir, "--rows", "reopen,kill", "--report-dir", filepath.Join(t.TempDir(), "r"))
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if es, _ := os.ReadDir(dir); len(es) > 0 {
				t.Errorf("the run left %v in the realms' directory", es)
			}
			r = conform(t, "run", "--store", scheme+":"+dir, "--rows", "reopen", "--keep-realms", "--report-dir", filepath.Join(t.TempDir(), "r"))
			if es, _ := os.ReadDir(dir); r.code != 0 || len(es) == 0 {
				t.Errorf("--keep-realms: exit %d, the realms' directory holds %v", r.code, es)
			}
		})
	}
}

// openTempDir returns a new directory that every user can enter (the
// admission chapter's unprivileged participant too), removed at the end.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "conform-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// boundIn returns the duration that follows marker in s, as
// time.ParseDuration reads it up to the next space, comma or parenthesis.
func boundIn(t *testing.T, s, marker string) time.Duration {
	t.Helper()
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%q does not name a bound after %q", textsafe.Clip(s, 600), marker)
	}
	rest := s[i+len(marker):]
	if j := strings.IndexAny(rest, " ,()"); j >= 0 {
		rest = rest[:j]
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		t.Fatalf("the bound after %q: %v", marker, err)
	}
	return d
}

// runReport runs the command with args and a report directory, expects
// exit code want, and returns the report.
func runReport(t *testing.T, want int, args ...string) *reports.Run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reports")
	r := conform(t, append(args, "--report-dir", dir)...)
	if r.code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestHangInCommitIsJudgedAtTheCall runs every chapter over a store whose
// eighth commit of each realm never answers: each hang is reported at the
// call, under the per-call bound derived from the store's latency (the
// floor, for a store that answers in microseconds), never as a spec
// timeout, and the realm serves on, so every other row passes.
func TestHangInCommitIsJudgedAtTheCall(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:hangs-commit")
	failed := 0
	for _, row := range run.Selected() {
		if row.Status != reports.StatusFailed {
			if !row.Certified() {
				t.Errorf("row %s: %s %v; want passed", row.ID, row.Status, row.NotExercised)
			}
			continue
		}
		failed++
		for _, f := range row.Failures {
			if f.Obligation != "ob:errors" || !strings.Contains(f.Message, "hang in Commit") || strings.Contains(f.Message, "time bound") {
				t.Errorf("row %s: want the hang reported at the commit under ob:errors, got [%s] %s", row.ID, f.Obligation, textsafe.Clip(f.Message, 400))
				continue
			}
			if d := boundIn(t, f.Message, "within the per-call bound of "); d > 5*time.Second {
				t.Errorf("row %s: the hang was judged at a per-call bound of %s, want one near the 2s floor", row.ID, d)
			}
		}
	}
	if failed != 4 {
		t.Errorf("%d rows failed, want one per chapter over the store (4, exploration included)", failed)
	}
}

// TestRealmLockIsJudgedAtTheStallBound runs the host store chapter over a
// store whose commits wait for one realm-wide lock: the stall rows call
// the stall at the bound derived from the store's own commit latency (the
// 1 s floor, for a store that commits in microseconds).
func TestRealmLockIsJudgedAtTheStallBound(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:realm-lock", "--label-filter", "chapter:host-store")
	for _, row := range run.Rows {
		stall := row.ID == "independence" || row.ID == "stalled-commit"
		switch {
		case row.NotSelected:
		case !stall && !row.Certified():
			t.Errorf("row %s: %s; want passed", row.ID, row.Status)
		case stall && row.Status != reports.StatusFailed:
			t.Errorf("row %s: %s; want failed", row.ID, row.Status)
		case stall:
			for _, f := range row.Failures {
				if f.Obligation != "ob:8" {
					t.Errorf("row %s: a failure names %s, want ob:8: %s", row.ID, f.Obligation, textsafe.Clip(f.Message, 300))
					continue
				}
				if d := boundIn(t, f.Message, "(the stall bound: "); d > 1250*time.Millisecond {
					t.Errorf("row %s: the stall was called after %s, want about the 1s floor", row.ID, d)
				}
			}
		}
	}
}

// TestSilentServerIsRefusedByThePreflight points the command at a server
// that accepts connections and never answers: the preflight refuses it
// (exit 2) at its bound of 8 s, in one line: the whole command within
// the 10 s a user should wait.
func TestSilentServerIsRefusedByThePreflight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	r := conform(t, "run", "--store", "postgres://conform:x@"+ln.Addr().String()+"/conform?sslmode=disable", "--report-dir", "-")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(r.stderr, "cannot be opened") {
		t.Fatalf("want one line saying the store cannot be opened, got:\n%s", r.stderr)
	}
	if d := boundIn(t, r.stderr, "did not answer within "); d > engine.PreflightBound {
		t.Errorf("the preflight waited %s, want at most %s", d, engine.PreflightBound)
	}
}

// TestSlowStoreCertifies runs the independence row over the reference
// store behind 5 ms of latency per call, with the harness's own time
// bounded at the 1 s floor: the row's specs spend seconds in the store
// (over a thousand calls each), far beyond that bound, and pass.
func TestSlowStoreCertifies(t *testing.T) {
	run := runReport(t, 0, "run", "--store", "slow:5ms", "--rows", "independence", "--timeout", "1s")
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s %v", row.ID, row.Status, row.NotExercised)
		}
		if row.Duration <= 2*time.Second {
			t.Errorf("row %s took %s; the property needs its specs to spend more than their 1s bound in the store", row.ID, row.Duration)
		}
	}
}

// TestWaitingLapseCertifies runs the stale-fence row and 48 exploration
// histories (16 at once) over a store that lets leases run out by waiting
// its declared lease of 3 s, with the harness's own time bounded at 1 s:
// each LapseFenceLeases takes the lease, which is the store's right, and
// both rows pass. 48 histories, not 16: a crash armed at commit-before-point
// is reached only by a commit whose checks pass, and with leases lapsing on
// the wall clock 16 histories missed it in 1 run of 8.
func TestWaitingLapseCertifies(t *testing.T) {
	// The exploration runs alone, so that no row has shown it a lapse's
	// latency before its first lapse.
	for _, rows := range []string{"stale-fence", "explore-histories"} {
		run := runReport(t, 0, "run", "--store", "lapsewait:3s", "--rows", rows, "--timeout", "1s",
			"--seed", "11", "--explore-histories", "48", "--explore-parallel", "16")
		if n := len(run.Selected()); n != 1 {
			t.Fatalf("%d rows selected, want %s", n, rows)
		}
		for _, row := range run.Selected() {
			if !row.Certified() {
				t.Errorf("row %s: %s %v", row.ID, row.Status, row.NotExercised)
			}
			if row.Duration < 3*time.Second {
				t.Errorf("row %s took %s; the property needs at least one lapse of 3s", row.ID, row.Duration)
			}
		}
	}
}

// TestOutageStopsTheRun runs every chapter over a store whose server goes
// away at a realm's eighth commit: the row in which it happened and every
// row after it, in every chapter, are not run, saying that the store
// became unavailable; no row fails.
func TestOutageStopsTheRun(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:outage")
	if row := stoppedAt(t, run, "reopen"); row.Status != reports.StatusNotRun || !strings.Contains(strings.Join(row.NotExercised, " "), "the store became unavailable in row reopen") {
		t.Errorf("row reopen: %s %v; want not run because the store became unavailable", row.Status, row.NotExercised)
	}
}

// TestStuckCommitsStopTheRun runs every chapter over a store whose
// batches over two scopes all hang from a realm's eighth commit on, while
// its reads answer: the row in which the first hung fails under
// ob:errors, the probe after it finds that a fresh handle's commit hangs
// too, and every row after it, in every chapter, is not run, saying why;
// no other row fails.
func TestStuckCommitsStopTheRun(t *testing.T) {
	run := runReport(t, 1, "run", "--store", "canary:stuck-commits")
	row := stoppedAt(t, run, "reopen")
	if row.Status != reports.StatusFailed || len(row.Failures) == 0 || row.Failures[0].Obligation != "ob:errors" ||
		!strings.Contains(row.Failures[0].Message, "hang in Commit") || !strings.Contains(row.Failures[0].Message, "a fresh handle's Commit answered BREACH hang") {
		t.Errorf("row reopen: %s%v; want failed under ob:errors for the hang, saying a fresh handle's commit hung too", row.Status, row.Failures)
	}
}

// stoppedAt checks a run that the store stopped in row at: every row
// before it certified, and every row after it, in every chapter, not run
// because the store became unavailable in that row. A store's run has no
// admission row. It returns row at.
func stoppedAt(t *testing.T, run *reports.Run, at reports.RowID) reports.Row {
	t.Helper()
	var stop *reports.Row
	for _, row := range run.Selected() {
		switch {
		case row.Chapter == "admission":
			t.Errorf("row %s: a store's run has a row of the fences", row.ID)
		case row.ID == at:
			stop = &row
		case stop != nil && (row.Status != reports.StatusNotRun || !strings.Contains(strings.Join(row.NotExercised, " "), "the store became unavailable in row "+string(at))):
			t.Errorf("row %s: %s %v; want not run because the store became unavailable in row %s", row.ID, row.Status, row.NotExercised, at)
		case stop == nil && !row.Certified():
			t.Errorf("row %s: %s%v; want passed", row.ID, row.Status, row.Failures)
		}
	}
	if stop == nil {
		t.Fatalf("the report has no row %s", at)
	}
	return *stop
}

// TestReportsThatCannotBeWrittenExitTwo runs with the report directory on
// a filesystem too small for the reports (a 64 KiB tmpfs): the run ends,
// its summary says the reports were not written, and the exit code is 2,
// not the verdict's 0.
func TestReportsThatCannotBeWrittenExitTwo(t *testing.T) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatalf("mount a small tmpfs (the tests run as root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "reports")
	r := conform(t, "run", "--rows", "reopen,kill", "--report-dir", dir)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "CONFORMANT") || !strings.Contains(r.stdout, "reports NOT written") {
		t.Errorf("the summary does not give the verdict and say the reports were not written:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "reports: "+dir) {
		t.Errorf("the summary claims the reports were written:\n%s", r.stdout)
	}
	if es, _ := os.ReadDir(mnt); len(es) != 0 {
		t.Errorf("a failed write left %v", es)
	}
}

// liveRun is a command running in the background, its stdout read line by
// line as the test needs it.
type liveRun struct {
	cmd    *exec.Cmd
	sc     *bufio.Scanner
	seen   []string
	stderr bytes.Buffer
}

// startLive starts the command with args, without the caller's CONFORM_*
// variables, in a directory of its own.
func startLive(t *testing.T, args ...string) *liveRun {
	t.Helper()
	l := &liveRun{cmd: exec.Command(binary, args...)}
	l.cmd.Dir = t.TempDir()
	l.cmd.Env = withoutConformEnv()
	l.cmd.Stderr = &l.stderr
	out, err := l.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l.sc = bufio.NewScanner(out)
	return l
}

// next returns the next line of stdout; false once it has ended.
func (l *liveRun) next() (string, bool) {
	if !l.sc.Scan() {
		return "", false
	}
	l.seen = append(l.seen, l.sc.Text())
	return l.sc.Text(), true
}

// stdout returns the lines read so far.
func (l *liveRun) stdout() string { return strings.Join(l.seen, "\n") }

// interruptExitsOne sends SIGINT, reads the rest of stdout, and fails the
// test unless the command exits with code 1. It returns the whole stdout.
func (l *liveRun) interruptExitsOne(t *testing.T) string {
	t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := l.next(); !ok {
			break
		}
	}
	err := l.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s\n%s", err, l.stdout(), l.stderr.String())
	}
	return l.stdout()
}

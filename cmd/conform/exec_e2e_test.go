package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/internal/proccanary"
	"github.com/conform-spi/conform/reports"
)

// The store processes of these tests: conform-serve (built once, with the
// conformcanary tag) and the Python example under the system's python3.
var (
	serveOnce   sync.Once
	serveBinary string
	serveErr    error
)

func conformServe(t *testing.T) string {
	t.Helper()
	serveOnce.Do(func() {
		serveBinary = filepath.Join(filepath.Dir(binary), "conform-serve")
		out, err := exec.Command("go", "build", "-tags", "conformcanary", "-o", serveBinary, "../conform-serve").CombinedOutput()
		if err != nil {
			serveErr = &buildError{err, string(out)}
		}
	})
	if serveErr != nil {
		t.Fatal(serveErr)
	}
	return serveBinary
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building conform-serve: " + e.err.Error() + "\n" + e.out }

func pythonStore(t testing.TB) string {
	t.Helper()
	python := "/usr/bin/python3" // scripts/test.sh installs it
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no %s (scripts/test.sh installs it): %v", python, err)
	}
	script, err := filepath.Abs("../../examples/python-sqlite/store.py")
	if err != nil {
		t.Fatal(err)
	}
	return "exec:" + python + " " + script
}

// runReportEnv is runReport with variables added to the command's
// environment.
func runReportEnv(t *testing.T, env []string, want int, args ...string) (*reports.Run, result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reports")
	r := conformEnv(t, env, append(args, "--report-dir", dir)...)
	if r.code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run, r
}

// checkAllPassed fails unless every selected row passed: none failed, was
// not exercised (an exec: store that reached no in-store site) or did not
// run.
func checkAllPassed(t *testing.T, run *reports.Run) {
	t.Helper()
	if sel := run.Selected(); len(sel) != len(run.Rows) || len(run.Rows) < 30 {
		t.Errorf("%d of %d rows selected, want every row of the store chapters", len(sel), len(run.Rows))
	}
	explored := false
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised %v", row.ID, row.Status, row.NotExercised)
		}
		explored = explored || row.ID == "explore-histories"
	}
	if !explored {
		t.Error("the exploration chapter did not run")
	}
}

// execExplore is the exploration budget of the runs over store processes
// here: every Open starts a process, which makes a history cost a tenth
// of a second to half a second, so CI plays 100 histories of a fixed seed
// (every coverage item is reached by then) rather than the default 300.
var execExplore = []string{"--explore-histories", "100", "--seed", "11"}

// TestExecServedGoStoreIsConformant certifies the reference store and
// conform's SQLite store served as processes by conform-serve: every Open
// a new process, kills by SIGKILL, in-store sites as at calls.
func TestExecServedGoStoreIsConformant(t *testing.T) {
	for _, store := range []string{"reference", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			run, _ := runReportEnv(t, nil, 0, append([]string{"run", "--store", "exec:" + conformServe(t) + " " + store}, execExplore...)...)
			checkAllPassed(t, run)
		})
	}
}

// TestExecPythonStoreIsConformant certifies examples/python-sqlite.
func TestExecPythonStoreIsConformant(t *testing.T) {
	run, _ := runReportEnv(t, nil, 0, append([]string{"run", "--store", pythonStore(t)}, execExplore...)...)
	checkAllPassed(t, run)
}

// TestExecExampleBugsAreFound plants each bug of the Python and the Node
// examples and expects the run to fail the obligation it breaks. The runs
// select that obligation's rows of the scripted chapters only (no
// exploration), to keep the test short.
func TestExecExampleBugsAreFound(t *testing.T) {
	for _, store := range []struct{ name, url string }{{"python", pythonStore(t)}, {"node", nodeStore(t)}} {
		for _, c := range []struct{ bug, ob string }{
			{"ignore-token", "ob:5"},
			{"torn-batch", "ob:1"},
		} {
			t.Run(store.name+"/"+c.bug, func(t *testing.T) {
				run, r := runReportEnv(t, []string{"EXAMPLE_BUG=" + c.bug}, 1, "run", "--store", store.url, "--label-filter", c.ob, "--explore-histories", "0")
				if !strings.Contains(r.stdout, "NOT CONFORMANT") || !strings.Contains(r.stdout, "("+c.ob+")") {
					t.Errorf("the summary does not name %s:\n%s", c.ob, r.stdout)
				}
				failed := 0
				for _, row := range run.Selected() {
					if row.Status == reports.StatusFailed {
						failed++
					}
				}
				if failed == 0 {
					t.Errorf("no row failed in report.json")
				}
			})
		}
	}
}

// TestExecProtocolCanaries serves the SQLite store through each protocol
// canary: the breach is a finding of the error contract (or a hang at the
// per-call bound), the run ends with its summary and the reports, and no
// row is left not run.
func TestExecProtocolCanaries(t *testing.T) {
	serve := conformServe(t)
	for _, mode := range proccanary.Modes {
		t.Run(mode, func(t *testing.T) {
			// A short per-call bound keeps the silent canary's hangs short.
			run, r := runReportEnv(t, []string{"CONFORMSERVE_CANARY=" + mode}, 1, "run", "--store", "exec:"+serve+" sqlite", "--label-filter", "row:kill", "--call-timeout", "1s")
			if !strings.Contains(r.stdout, "NOT CONFORMANT") {
				t.Errorf("no summary:\n%s", r.stdout)
			}
			want := "broke the protocol"
			if mode == "silent" {
				want = "hang in"
			}
			if !strings.Contains(r.stdout, want) {
				t.Errorf("no finding names %q:\n%s", want, r.stdout)
			}
			if mode == "dies" && !strings.Contains(r.stdout, "dying in the middle of an answer") {
				t.Errorf("the finding does not quote the process's stderr:\n%s", r.stdout)
			}
			for _, row := range run.Selected() {
				if row.Status == reports.StatusNotRun {
					t.Errorf("row %s did not run", row.ID)
				}
			}
		})
	}
}

// BenchmarkExecPythonRun is the wall time of a whole conform run (every
// default chapter) over the Python example.
func BenchmarkExecPythonRun(b *testing.B) {
	store := pythonStore(b)
	for b.Loop() {
		cmd := exec.Command(binary, "run", "--store", store, "--report-dir", b.TempDir())
		cmd.Env = withoutConformEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("conform run: %v\n%s", err, out)
		}
	}
}

// TestExecNodeStoreIsConformant certifies examples/node-jsonlog, a store
// process in Node.js over a log of JSON files, over every chapter. It
// needs node (v20) on PATH, which scripts/test.sh installs.
func TestExecNodeStoreIsConformant(t *testing.T) {
	run, _ := runReportEnv(t, nil, 0, append([]string{"run", "--store", nodeStore(t)}, execExplore...)...)
	checkAllPassed(t, run)
}

// nodeStore returns the exec: URL of the Node example.
func nodeStore(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("no node on PATH (scripts/test.sh installs it): %v", err)
	}
	script, err := filepath.Abs("../../examples/node-jsonlog/store.js")
	if err != nil {
		t.Fatal(err)
	}
	return "exec:" + node + " " + script
}

// TestExecRunLeavesNoRealm runs exec: rows with $TMPDIR pointing at an
// empty directory: every realm the run made there is gone at its end.
func TestExecRunLeavesNoRealm(t *testing.T) {
	tmp := openTempDir(t)
	r := conformEnv(t, []string{"TMPDIR=" + tmp}, "run", "--store", "exec:"+conformServe(t)+" sqlite", "--rows", "reopen,kill", "--report-dir", filepath.Join(t.TempDir(), "r"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if es, _ := os.ReadDir(tmp); len(es) > 0 {
		t.Errorf("the run left %d entries in $TMPDIR: %v", len(es), es)
	}
}

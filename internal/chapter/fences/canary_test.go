//go:build linux

package fences_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/spec"
)

// rowResult is what a child's results say of one row.
type rowResult struct {
	state        spec.State
	obligations  []string // of its recorded failures, in order
	notExercised []string
}

// childCase is one child run of the chapter: the implementation it
// certifies, the commands its helpers answer "unsupported", the rows that
// must fail, each with the obligation its first failure must name, and
// the rows that must be reported not exercised. Every other row must pass.
type childCase struct {
	name         string
	impl         string // a canary of fences.Canaries, or "correct"
	unsupported  string // fences.UnsupportedEnv
	command      string // the helper's command, words separated by spaces; "": the test executable
	fail         map[string]string
	notExercised []string
}

var childCases = []childCase{
	{name: "correct", impl: "correct"},
	{name: fences.BugSharedGuard, impl: fences.BugSharedGuard, fail: map[string]string{
		"exclusive-shared":    fences.ObExclusion,
		"shared-shared":       fences.ObExclusion,
		"exclusive-exclusive": fences.ObExclusion,
		"try":                 fences.ObBound,
		"bound":               fences.ObBound,
		"sigkill":             fences.ObExclusion,
		"cloexec":             fences.ObExclusion,
		"denied":              fences.ObExclusion,
		"removed":             fences.ObExclusion,
		"flock-shared":        fences.ObFlock,
		"flock-excluded":      fences.ObFlock,
	}},
	{name: fences.BugUmaskMode, impl: fences.BugUmaskMode, fail: map[string]string{
		"mode": fences.ObPermissions,
	}},
	{name: fences.BugFollowSymlink, impl: fences.BugFollowSymlink, fail: map[string]string{
		"file-kinds": fences.ObFiles,
	}},
	{name: fences.BugRepairMode, impl: fences.BugRepairMode, fail: map[string]string{
		"existing-mode":  fences.ObPermissions,
		"existing-group": fences.ObPermissions,
		// Root repairs the group of the fence nobody could not settle.
		"group": fences.ObPermissions,
	}},
	{name: "unsupported", impl: "correct", unsupported: "set,spawn-linger,bind,umask",
		notExercised: []string{"order-taken", "order-refused", "cloexec", "filesystem", "mode"}},
}

// TestCanaries runs the whole chapter in a child process against each
// canary of the built-in helper, against the correct helper, and against
// the correct helper lacking some commands, and checks that exactly the
// expected rows fail, each naming the expected obligation, that exactly
// the expected rows are not exercised, and that every other row passes.
func TestCanaries(t *testing.T) {
	if _, ok := os.LookupEnv(envChild); ok {
		t.Skip("a child of TestCanaries runs TestChapter only")
	}
	if os.Geteuid() != 0 {
		t.Skip("the expected rows need every row exercised, which needs root (CI runs as root)")
	}
	var canaries []string
	for _, c := range childCases {
		if c.impl != "correct" {
			canaries = append(canaries, c.impl)
		}
	}
	if !slices.Equal(canaries, fences.Canaries()) {
		t.Errorf("the cases cover the canaries %v, the chapter has %v", canaries, fences.Canaries())
	}
	for _, c := range childCases {
		t.Run(c.name, func(t *testing.T) { checkChild(t, c) })
	}
}

// TestPythonHelper runs the chapter against testdata/helper.py, a helper
// written in Python from the protocol document alone, and checks that it
// passes every row.
func TestPythonHelper(t *testing.T) {
	if _, ok := os.LookupEnv(envChild); ok {
		t.Skip("a child of TestPythonHelper runs TestChapter only")
	}
	if os.Geteuid() != 0 {
		t.Skip("every row passing needs root (CI runs as root)")
	}
	// The system's interpreter: one under root's home is out of nobody's
	// reach.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no %s (scripts/test.sh installs it): %v", python, err)
	}
	// The script must be readable by nobody, wherever the module lives.
	dir, err := os.MkdirTemp("", "admission-python-helper-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "helper.py"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "helper.py")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	checkChild(t, childCase{name: "python", impl: "correct", command: python + " " + path})
}

// checkChild runs one child case and checks its rows.
func checkChild(t *testing.T, c childCase) {
	t.Helper()
	got := runChild(t, c)
	for _, row := range fences.Rows() {
		res, ok := got[row.ID]
		if !ok {
			t.Errorf("row %s: not in the child's report", row.ID)
			continue
		}
		ob, mustFail := c.fail[row.ID]
		skipped := slices.Contains(c.notExercised, row.ID)
		switch {
		case mustFail && res.state != spec.Failed:
			t.Errorf("row %s: %v, want failed for %s", row.ID, res.state, ob)
		case mustFail && (len(res.obligations) == 0 || res.obligations[0] != ob):
			t.Errorf("row %s failed naming %v, want %s first", row.ID, res.obligations, ob)
		case mustFail && !slices.Contains(row.Obligations, ob):
			t.Errorf("row %s failed for %s, which it does not list in %v", row.ID, ob, row.Obligations)
		case skipped && (res.state != spec.Skipped || len(res.notExercised) != 1):
			t.Errorf("row %s: %v, not exercised %v; want skipped with one nothing-exercised entry", row.ID, res.state, res.notExercised)
		case skipped && !strings.Contains(res.notExercised[0], "unsupported"):
			t.Errorf("row %s: not exercised for %q, want the helper's unsupported answer", row.ID, res.notExercised[0])
		case !mustFail && !skipped && res.state != spec.Passed:
			t.Errorf("row %s: %v (failures %v, not exercised %v), want passed", row.ID, res.state, res.obligations, res.notExercised)
		}
	}
	for id := range c.fail {
		if !slices.ContainsFunc(fences.Rows(), func(r fences.RowSpec) bool { return r.ID == id }) {
			t.Errorf("expected row %s is not a row of the chapter", id)
		}
	}
}

// runChild runs TestChapter in a child process for case c and returns
// its rows' results by row ID.
func runChild(t *testing.T, c childCase) map[string]rowResult {
	t.Helper()
	report := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChapter$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+c.impl, envChildUnsupported+"="+c.unsupported, envChildCommand+"="+c.command, envChildResults+"="+report)
	out, err := cmd.CombinedOutput()
	if failing := len(c.fail) > 0; (err != nil) != failing {
		t.Fatalf("the child for %s ended with %v; output:\n%s", c.name, err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the child for %s wrote no results (%v); output:\n%s", c.name, err, out)
	}
	var specs []*spec.Result
	if err := json.Unmarshal(data, &specs); err != nil {
		t.Fatal(err)
	}
	results := map[string]rowResult{}
	for _, s := range specs {
		labels := s.Labels
		if !slices.Contains(labels, fences.ID.Label()) {
			t.Errorf("spec %q lacks the label %s", s.FullText(), fences.ID.Label())
		}
		var id string
		for _, l := range labels {
			if strings.HasPrefix(l, fences.RowLabelPrefix) {
				id = strings.TrimPrefix(l, fences.RowLabelPrefix)
			}
		}
		res := rowResult{state: s.State}
		for _, f := range s.Failures {
			if !strings.HasPrefix(s.Message, "["+string(f.Obligation)+"] ") {
				t.Errorf("row %s: failure message %q does not start with [%s]", id, s.Message, f.Obligation)
			}
			res.obligations = append(res.obligations, string(f.Obligation))
		}
		if s.Nothing {
			res.notExercised = append(res.notExercised, s.NotExercised...)
		}
		if _, dup := results[id]; dup {
			t.Errorf("row %s: two specs", id)
		}
		results[id] = res
	}
	var ids []string
	for id := range results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	t.Logf("%s: rows %v", c.name, ids)
	return results
}

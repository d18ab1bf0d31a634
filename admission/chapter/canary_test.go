//go:build linux

package chapter_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/conform-spi/conform/admission/chapter"
)

// rowResult is what a child's Ginkgo report says of one row.
type rowResult struct {
	state        types.SpecState
	obligations  []string // of its conform/failure entries, in order
	notExercised []string
}

// canaryFailures maps each canary to the rows it must fail, each with the
// obligation its first failure must name. Every other row must pass.
var canaryFailures = map[string]map[string]string{
	chapter.BugSharedGuard: {
		"exclusive-shared":    chapter.ObExclusion,
		"shared-shared":       chapter.ObExclusion,
		"exclusive-exclusive": chapter.ObExclusion,
		"group":               chapter.ObPermissions,
		"try":                 chapter.ObBound,
		"bound":               chapter.ObBound,
		"sigkill":             chapter.ObExclusion,
		"cloexec":             chapter.ObExclusion,
		"denied":              chapter.ObExclusion,
		"flock-shared":        chapter.ObFlock,
		"flock-excluded":      chapter.ObFlock,
	},
	chapter.BugUmaskMode: {
		"mode": chapter.ObPermissions,
	},
	chapter.BugFollowSymlink: {
		"file-kinds": chapter.ObFiles,
	},
}

// TestCanaries runs the whole chapter in a child process against each
// canary of the built-in helper and against the correct helper, and checks
// that exactly the expected rows fail, each naming the expected
// obligation, and that the correct helper passes every row.
func TestCanaries(t *testing.T) {
	if _, ok := os.LookupEnv(envChild); ok {
		t.Skip("a child of TestCanaries runs TestChapter only")
	}
	if os.Geteuid() != 0 {
		t.Skip("the canaries' expected rows need every row exercised, which needs root (CI runs as root)")
	}
	impls := append([]string{"correct"}, chapter.Canaries()...)
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) {
			got := runChild(t, impl)
			want := canaryFailures[impl]
			for _, row := range chapter.Rows() {
				res, ok := got[row.ID]
				if !ok {
					t.Errorf("row %s: not in the child's report", row.ID)
					continue
				}
				ob, mustFail := want[row.ID]
				switch {
				case mustFail && res.state != types.SpecStateFailed:
					t.Errorf("row %s: %v, want failed for %s", row.ID, res.state, ob)
				case mustFail && (len(res.obligations) == 0 || res.obligations[0] != ob):
					t.Errorf("row %s failed naming %v, want %s first", row.ID, res.obligations, ob)
				case mustFail && !slices.Contains(row.Obligations, ob):
					t.Errorf("row %s failed for %s, which it does not list in %v", row.ID, ob, row.Obligations)
				case !mustFail && res.state != types.SpecStatePassed:
					t.Errorf("row %s: %v (failures %v, not exercised %v), want passed", row.ID, res.state, res.obligations, res.notExercised)
				}
			}
			for id := range want {
				if !slices.ContainsFunc(chapter.Rows(), func(r chapter.RowSpec) bool { return r.ID == id }) {
					t.Errorf("expected row %s is not a row of the chapter", id)
				}
			}
		})
	}
}

// runChild runs TestChapter in a child process against impl and returns
// its rows' results by row ID.
func runChild(t *testing.T, impl string) map[string]rowResult {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChapter$", "-test.count=1",
		"-ginkgo.json-report="+report, "-ginkgo.no-color")
	cmd.Env = append(os.Environ(), envChild+"="+impl)
	out, err := cmd.CombinedOutput()
	failing := len(canaryFailures[impl]) > 0
	if (err != nil) != failing {
		t.Fatalf("the child for %s ended with %v; output:\n%s", impl, err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the child for %s wrote no report (%v); output:\n%s", impl, err, out)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		t.Fatal(err)
	}
	results := map[string]rowResult{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			labels := s.Labels()
			if !slices.Contains(labels, chapter.ChapterLabel) {
				t.Errorf("spec %q lacks the label %s", s.FullText(), chapter.ChapterLabel)
			}
			var id string
			for _, l := range labels {
				if strings.HasPrefix(l, chapter.RowLabelPrefix) {
					id = strings.TrimPrefix(l, chapter.RowLabelPrefix)
				}
			}
			res := rowResult{state: s.State}
			for _, e := range s.ReportEntries {
				v, _ := e.GetRawValue().(string)
				switch e.Name {
				case chapter.EntryFailure:
					var f struct {
						Message    string `json:"message"`
						Obligation string `json:"obligation"`
					}
					if err := json.Unmarshal([]byte(v), &f); err != nil {
						t.Errorf("row %s: failure entry %q: %v", id, v, err)
					}
					if !strings.HasPrefix(s.Failure.Message, "["+f.Obligation+"] ") {
						t.Errorf("row %s: failure message %q does not start with [%s]", id, s.Failure.Message, f.Obligation)
					}
					res.obligations = append(res.obligations, f.Obligation)
				case chapter.EntryNotExercised:
					res.notExercised = append(res.notExercised, v)
				}
			}
			if _, dup := results[id]; dup {
				t.Errorf("row %s: two specs", id)
			}
			results[id] = res
		}
	}
	var ids []string
	for id := range results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	t.Logf("%s: rows %v", impl, ids)
	return results
}

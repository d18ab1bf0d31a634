package scripted_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/longrun"
	"github.com/conform-spi/conform/internal/chapter/worker"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/internal/spec"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// The environment through which TestWriterCanaries tells a child what to run.
const (
	envWriterCanary    = "CONFORM_WRITER_CANARY"
	envWriterCanaryOut = "CONFORM_WRITER_CANARY_OUT"
)

// writerCanaries are the writers that each break one rule; "correct" is
// the control.
var writerCanaries = map[string]writer.Unsafe{
	"correct":            {},
	"skip-self-fence":    {SkipSelfFence: true},
	"skip-takeover-wait": {SkipTakeoverWait: true},
	"reuse-commit-ids":   {ReuseCommitIDs: true},
}

// specResult is what a child reports of one spec.
type specResult struct {
	Row         string                 `json:"row"`
	Text        string                 `json:"text"`
	State       string                 `json:"state"`
	Obligations []reports.ObligationID `json:"obligations"` // of its failures
	Message     string                 `json:"message"`
	NotExer     bool                   `json:"not_exercised"`
}

// TestWriterCanaryChild runs the long-run and durable-worker chapters over
// the reference store with the writer envWriterCanary names, and writes
// every spec's result to envWriterCanaryOut. It runs only as a child of
// TestWriterCanaries.
func TestWriterCanaryChild(t *testing.T) {
	name := os.Getenv(envWriterCanary)
	if name == "" {
		t.Skip("a child of TestWriterCanaries: runs only with " + envWriterCanary + " set")
	}
	unsafe, ok := writerCanaries[name]
	if !ok {
		t.Fatalf("no writer canary %q", name)
	}
	out := os.Getenv(envWriterCanaryOut)
	cfg := chapter.Config{Settings: settings.Settings{Options: settings.Options{Seed: 7}}, NewRealm: func(context.Context) (hoststore.HostStoreFactory, error) { return reference.NewFactory(), nil }}
	tree := spec.NewTree()
	chapter.RegisterRows(tree, cfg, longrun.ID, longrun.Title, longrun.RowsWith(unsafe))
	chapter.RegisterRows(tree, cfg, worker.ID, worker.Title, worker.RowsWith(unsafe))
	rep := spec.Run(context.Background(), tree, spec.Config{})
	var res []specResult
	for _, sr := range rep.Specs {
		x := specResult{Text: sr.Text, State: sr.State.String(), Message: sr.Message}
		for _, l := range sr.Labels {
			if id, ok := strings.CutPrefix(l, "row:"); ok {
				x.Row = id
			}
		}
		for _, f := range sr.Failures {
			x.Obligations = append(x.Obligations, f.Obligation)
		}
		x.NotExer = len(sr.NotExercised) > 0
		res = append(res, x)
	}
	b, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(out, b, 0o644)
	}
	if err != nil {
		t.Fatal("writing the results: " + err.Error())
	}
}

// runWriterCanary runs one child and returns its results by row.
func runWriterCanary(t *testing.T, name string) map[string][]specResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterCanaryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envWriterCanary+"="+name, envWriterCanaryOut+"="+out)
	log, _ := cmd.CombinedOutput() // failing specs make the child fail; the results are judged
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("child %s wrote no results (%v); its output:\n%s", name, err, tail(log, 3000))
	}
	var res []specResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	byRow := map[string][]specResult{}
	for _, r := range res {
		byRow[r.Row] = append(byRow[r.Row], r)
	}
	return byRow
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestWriterCanaries shows that the chapters check the run, not just that
// it ended: each writer that breaks one of the writer rules fails the
// rows that reach the rule, under ob:writer, and the correct writer passes
// every spec with everything exercised.
func TestWriterCanaries(t *testing.T) {
	cases := []struct {
		name     string
		mustFail []string // rows that must fail, under chapter.ObWriter
	}{
		{"correct", nil},
		{"skip-self-fence", []string{"long-run-takeover", "long-run-renew-failed", "long-run-paused", "worker-takeover"}},
		{"skip-takeover-wait", []string{"long-run-takeover", "long-run-renew-failed", "long-run-paused", "worker-takeover"}},
		{"reuse-commit-ids", []string{"long-run-after-landed", "long-run-answer-lost", "worker-after-landed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			byRow := runWriterCanary(t, c.name)
			if len(byRow) == 0 {
				t.Fatal("the child ran no spec")
			}
			for row, specs := range byRow {
				failed := false
				for _, s := range specs {
					if s.State == "failed" {
						failed = true
						if !slices.Contains(s.Obligations, chapter.ObWriter) && slices.Contains(c.mustFail, row) {
							t.Errorf("row %s failed under %v, want %s: %s", row, s.Obligations, chapter.ObWriter, clipMsg(s.Message))
						}
					}
					if c.mustFail == nil && (s.State != "passed" || s.NotExer) {
						t.Errorf("control: row %s spec %q: %s (not exercised: %v): %s", row, s.Text, s.State, s.NotExer, clipMsg(s.Message))
					}
				}
				t.Logf("%s: row %s failed=%v", c.name, row, failed)
				if slices.Contains(c.mustFail, row) && !failed {
					t.Errorf("row %s passed the %s writer", row, c.name)
				}
			}
			for _, row := range c.mustFail {
				if byRow[row] == nil {
					t.Errorf("no row %s ran", row)
				}
			}
		})
	}
}

func clipMsg(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return fmt.Sprint(s)
}

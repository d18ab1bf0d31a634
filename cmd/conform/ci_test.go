package main_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/conform-spi/conform/reports"
)

// yamlDocs parses every document of the YAML file at path.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			out = append(out, doc)
		}
	}
}

// at returns the value at a path of keys (and list indices) in v, failing
// the test when it is not there.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no map at %v (looking for %q)", path, k)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("no %q at %v", k, path)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no item %d at %v", k, path)
			}
			v = l[k]
		}
	}
	return v
}

// withConform returns a directory holding the test's conform command as
// ./conform, and an environment whose PATH finds it first.
func withConform(t *testing.T) (string, []string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "conform")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range withoutConformEnv() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return bin, env
}

// shell runs script with shell (e.g. "sh", "-c") in dir with env and
// returns its exit code and output.
func shell(t *testing.T, dir string, env []string, script string, shell ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(shell[0], append(shell[1:], script)...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// TestKubernetesJobRunsShardsAndMerges reads ci/kubernetes/explore-job.yaml
// (it parses as YAML; an Indexed Job of as many completions as SHARDS and
// a merge Job share the reports volume) and runs its two scripts as the
// pods would, with the test's conform and the reference store: every
// shard's command line is accepted and writes its reports, and the merge
// joins them into one conformant set; a ledger is accepted too.
func TestKubernetesJobRunsShardsAndMerges(t *testing.T) {
	docs := yamlDocs(t, "../../ci/kubernetes/explore-job.yaml")
	var kinds []string
	var cm map[string]any
	var jobs []any
	for _, d := range docs {
		kinds = append(kinds, at(t, d, "kind").(string))
		switch d["kind"] {
		case "ConfigMap":
			cm = at(t, d, "data").(map[string]any)
		case "Job":
			jobs = append(jobs, d)
		}
	}
	if !slices.Equal(kinds, []string{"ConfigMap", "PersistentVolumeClaim", "Job", "Job"}) {
		t.Fatalf("kinds %v", kinds)
	}
	shards, err := strconv.Atoi(at(t, cm, "SHARDS").(string))
	if err != nil || shards < 2 {
		t.Fatalf("SHARDS %v", cm["SHARDS"])
	}
	explore, merge := jobs[0], jobs[1]
	if at(t, explore, "spec", "completionMode") != "Indexed" || at(t, explore, "spec", "completions") != shards || at(t, explore, "spec", "parallelism") != shards {
		t.Fatalf("the explore Job is not Indexed with %d completions and parallelism", shards)
	}
	for _, j := range jobs {
		c := at(t, j, "spec", "template", "spec", "containers", 0)
		if m := at(t, c, "volumeMounts", 0, "mountPath"); m != cm["REPORTS"] {
			t.Errorf("a container mounts the reports at %v, REPORTS is %v", m, cm["REPORTS"])
		}
		if cmd := at(t, c, "command"); !slices.Equal(cmd.([]any), []any{"/bin/sh", "-c"}) {
			t.Errorf("command %v", cmd)
		}
	}
	exploreScript := at(t, explore, "spec", "template", "spec", "containers", 0, "args", 0).(string)
	mergeScript := at(t, merge, "spec", "template", "spec", "containers", 0, "args", 0).(string)
	if !strings.Contains(exploreScript, "conform explore ") || !strings.Contains(exploreScript, `--shard "$JOB_COMPLETION_INDEX/$SHARDS"`) || !strings.Contains(mergeScript, "conform merge ") {
		t.Fatalf("the scripts do not run conform explore --shard and conform merge:\n%s\n%s", exploreScript, mergeScript)
	}

	_, env := withConform(t)
	reportsDir := t.TempDir()
	for k, v := range cm {
		env = append(env, k+"="+fmt.Sprint(v))
	}
	env = append(env, "STORE_URL=reference:", "HISTORIES=200", "REPORTS="+reportsDir, "WAIT_SECONDS=0")
	for i := range shards {
		code, out := shell(t, t.TempDir(), append(env, "JOB_COMPLETION_INDEX="+strconv.Itoa(i)), exploreScript, "sh", "-c")
		if code != 0 || !strings.Contains(out, fmt.Sprintf("shard %d/%d", i, shards)) {
			t.Fatalf("shard %d: exit %d\n%s", i, code, out)
		}
	}
	code, out := shell(t, t.TempDir(), env, mergeScript, "sh", "-c")
	merged := filepath.Join(reportsDir, fmt.Sprint(cm["SEED"]), "merged")
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	run := readRun(t, merged)
	if run.MergedFrom != shards || len(run.Explore.Seeds) != 200 || run.Verdict() != reports.VerdictConformant {
		t.Fatalf("merged %d shards, %d histories, %s", run.MergedFrom, len(run.Explore.Seeds), run.Verdict())
	}
	code, out = shell(t, t.TempDir(), append(env, "JOB_COMPLETION_INDEX=0", "LEDGER="+merged), exploreScript, "sh", "-c")
	if code != 0 || !strings.Contains(out, "failing histories of the ledger") {
		t.Fatalf("shard 0 with a ledger: exit %d\n%s", code, out)
	}
}

var expr = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

// TestGitHubWorkflowRunsShardsAndMerges reads ci/github/explore-shards.yml
// (it parses as YAML; a matrix of one job a shard and a merge job that
// runs after them, even when they fail) and runs its conform steps as the
// runner would (bash -eo pipefail), with the test's conform and the
// reference store: each shard's command line is accepted, the merge joins
// the downloaded reports and the summary step publishes report.md.
func TestGitHubWorkflowRunsShardsAndMerges(t *testing.T) {
	docs := yamlDocs(t, "../../ci/github/explore-shards.yml")
	if len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
	wf := docs[0]
	shards, ok := at(t, wf, "env", "SHARDS").(int)
	if !ok || shards < 2 {
		t.Fatalf("env.SHARDS %v", wf["env"])
	}
	matrix := at(t, wf, "jobs", "explore", "strategy", "matrix", "shard").([]any)
	for i := range shards {
		if i >= len(matrix) || matrix[i] != i {
			t.Fatalf("matrix %v is not the shards 0..%d", matrix, shards-1)
		}
	}
	if len(matrix) != shards || at(t, wf, "jobs", "merge", "needs") != "explore" || at(t, wf, "jobs", "merge", "if") != "always()" {
		t.Fatalf("the merge job does not run after every shard, always")
	}
	steps := func(job string, want string) []string {
		var out []string
		for _, s := range at(t, wf, "jobs", job, "steps").([]any) {
			if r, ok := s.(map[string]any)["run"].(string); ok && strings.Contains(r, want) {
				out = append(out, r)
			}
		}
		if len(out) != 1 {
			t.Fatalf("job %s has %d steps that run %q, want 1", job, len(out), want)
		}
		return out
	}
	exploreStep := steps("explore", "./conform explore ")[0]
	mergeStep := steps("merge", "./conform merge ")[0]
	summaryStep := steps("merge", "GITHUB_STEP_SUMMARY")[0]

	_, env := withConform(t)
	work := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(work, "conform")); err != nil {
		t.Fatal(err)
	}
	env = append(env, "STORE_URL="+at(t, wf, "env", "STORE_URL").(string), "SHARDS="+strconv.Itoa(shards), "SEED=31", "HISTORIES=200")
	bash := []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}
	for i := range shards {
		script := expr.ReplaceAllStringFunc(exploreStep, func(e string) string {
			if strings.Join(strings.Fields(e), " ") != "${{ matrix.shard }}" {
				t.Fatalf("the explore step uses %s, which this test does not stand in for", e)
			}
			return strconv.Itoa(i)
		})
		if code, out := shell(t, work, env, script, bash...); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, code, out)
		}
		// download-artifact puts each artifact in a directory of its name.
		if err := os.Rename(filepath.Join(work, fmt.Sprintf("shard-%d", i)), filepath.Join(work, fmt.Sprintf("conform-shard-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if expr.MatchString(mergeStep) || expr.MatchString(summaryStep) {
		t.Fatalf("the merge steps use expressions this test does not stand in for")
	}
	if code, out := shell(t, work, env, mergeStep, bash...); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	if code, out := shell(t, work, append(env, "GITHUB_STEP_SUMMARY="+summary), summaryStep, bash...); code != 0 {
		t.Fatalf("summary: exit %d\n%s", code, out)
	}
	md := mustRead(t, filepath.Join(work, "merged", "report.md"))
	if got := mustRead(t, summary); !bytes.Equal(got, md) || len(md) == 0 {
		t.Fatalf("the job summary is not the merged report.md")
	}
	if run := readRun(t, filepath.Join(work, "merged")); run.MergedFrom != shards || run.Seed != 31 {
		t.Fatalf("merged %d shards of seed %d", run.MergedFrom, run.Seed)
	}
}

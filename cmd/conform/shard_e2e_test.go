package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/engine"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/reports"
)

// parallel runs the command once for each argument list, all at once, in
// directory dir, and returns their results in order.
func parallel(t *testing.T, dir string, argss ...[]string) []result {
	t.Helper()
	type ran struct {
		cmd      *exec.Cmd
		out, err *bytes.Buffer
	}
	var rs []ran
	for _, args := range argss {
		cmd := exec.Command(binary, args...)
		cmd.Dir = dir
		cmd.Env = withoutConformEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting conform %v: %v", args, err)
		}
		rs = append(rs, ran{cmd, &out, &errb})
	}
	var res []result
	for i, r := range rs {
		err := r.cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("running conform %v: %v", argss[i], err)
		}
		res = append(res, result{code, r.out.String(), r.err.String()})
	}
	return res
}

// shardArgs returns the argument lists of n shards of one command: args,
// then --shard i/n and --report-dir dir/shard-i.
func shardArgs(dir string, n int, args ...string) [][]string {
	var out [][]string
	for i := range n {
		out = append(out, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, n), "--report-dir", filepath.Join(dir, fmt.Sprintf("shard-%d", i))))
	}
	return out
}

// shardDirs returns the report directories shardArgs names.
func shardDirs(dir string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, filepath.Join(dir, fmt.Sprintf("shard-%d", i)))
	}
	return out
}

func readRun(t *testing.T, dir string) *reports.Run {
	t.Helper()
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// reached returns the listed coverage items x reached.
func reached(x *reports.Exploration) []string {
	var out []string
	for _, it := range xp.Items() {
		if x.Coverage[it.ID] > 0 {
			out = append(out, it.ID)
		}
	}
	return out
}

// TestFourShardsMergeToTheUnshardedRun runs `conform explore` as four
// shard processes at once and unsharded, with one seed, against the
// reference store: the shards play every history of the budget once
// (their seeds are exactly the unsharded run's, none twice, none
// missing), each report records its shard and the seed, and the merge
// has the unsharded run's verdict, played count, coverage items reached
// and not-exercised list. The per-item counts are not compared: a
// history of several processes may take another path each time it is
// played (two unsharded runs of one seed differ in them too).
func TestFourShardsMergeToTheUnshardedRun(t *testing.T) {
	const seed, histories = 21, 300
	dir := t.TempDir()
	args := []string{"explore", "--histories", fmt.Sprint(histories), "--seed", fmt.Sprint(seed)}
	all := append(shardArgs(dir, 4, args...), append(slices.Clone(args), "--report-dir", filepath.Join(dir, "whole")))
	res := parallel(t, dir, all...)
	for i, r := range res {
		if r.code > 1 {
			t.Fatalf("conform %v: exit %d\n%s", all[i], r.code, r.stderr)
		}
	}
	if !strings.Contains(res[2].stdout, "shard 2/4") {
		t.Errorf("shard 2's header does not name its shard:\n%s", res[2].stdout)
	}
	for i, d := range shardDirs(dir, 4) {
		run := readRun(t, d)
		if run.Shard == nil || *run.Shard != (reports.Shard{Index: i, Count: 4}) || run.Seed != seed {
			t.Fatalf("%s records shard %v and seed %d, want %d/4 and %d", d, run.Shard, run.Seed, i, seed)
		}
		if n := len(run.Explore.Seeds); n != histories/4 {
			t.Errorf("shard %d played %d histories of its budget, want %d", i, n, histories/4)
		}
	}
	merged := filepath.Join(dir, "merged")
	m := conform(t, append(append([]string{"merge"}, shardDirs(dir, 4)...), "--report-dir", merged)...)
	whole := readRun(t, filepath.Join(dir, "whole"))
	if m.code != res[4].code {
		t.Fatalf("merge exit %d, the unsharded run's %d\n%s%s", m.code, res[4].code, m.stdout, m.stderr)
	}
	got := readRun(t, merged)
	if got.MergedFrom != 4 || got.Seed != seed || got.Shard != nil || got.Store != whole.Store {
		t.Errorf("merged report: from %d shards, seed %d, shard %v, store %q", got.MergedFrom, got.Seed, got.Shard, got.Store)
	}
	var want []uint64
	for i := range histories {
		want = append(want, xp.HistorySeed(seed, i))
	}
	if !slices.Equal(whole.Explore.Seeds, want) {
		t.Fatalf("the unsharded run's seeds are not HistorySeed(%d, 0..%d)", seed, histories-1)
	}
	gotSeeds := slices.Clone(got.Explore.Seeds)
	slices.Sort(gotSeeds)
	slices.Sort(want)
	if !slices.Equal(gotSeeds, want) {
		t.Fatalf("the shards' seeds (%d) are not the unsharded run's (%d)", len(gotSeeds), len(want))
	}
	if got.Explore.Played != whole.Explore.Played || got.Explore.Histories != histories {
		t.Errorf("merged played %d of %d, unsharded %d", got.Explore.Played, got.Explore.Histories, whole.Explore.Played)
	}
	if a, b := reached(got.Explore), reached(whole.Explore); !slices.Equal(a, b) || len(a) != len(xp.Items()) {
		t.Errorf("coverage items reached: merged %d %v, unsharded %d %v", len(a), a, len(b), b)
	}
	if got.Verdict() != whole.Verdict() || got.Verdict() != reports.VerdictConformant {
		t.Errorf("merged verdict %s, unsharded %s; want conformant", got.Verdict(), whole.Verdict())
	}
	gr, wr := exploreRowOf(t, got), exploreRowOf(t, whole)
	if gr.Status != wr.Status || !slices.Equal(gr.NotExercised, wr.NotExercised) {
		t.Errorf("merged row %s %v, unsharded %s %v", gr.Status, gr.NotExercised, wr.Status, wr.NotExercised)
	}
	for _, f := range []string{"junit.xml", "report.md", "report.html"} {
		if b := mustRead(t, filepath.Join(merged, f)); f != "junit.xml" && !strings.Contains(string(b), "merged from 4 shards; 300 histories of a budget of 300 played") {
			t.Errorf("the merged %s does not show the campaign", f)
		}
	}
}

// TestFailingShardsFailTheMerge: shards over a store that breaks order
// find failing histories; the merge exits 1, with every shard's failures
// and the ledger of all of them.
func TestFailingShardsFailTheMerge(t *testing.T) {
	dir := t.TempDir()
	res := parallel(t, dir, shardArgs(dir, 2, "explore", "--store", "canary:reversed-append", "--histories", "40", "--seed", "7")...)
	failures, ledger := 0, 0
	for i, d := range shardDirs(dir, 2) {
		if res[i].code != 1 {
			t.Fatalf("shard %d: exit %d, want 1\n%s", i, res[i].code, res[i].stderr)
		}
		run := readRun(t, d)
		failures += len(exploreRowOf(t, run).Failures)
		ledger += len(run.Explore.Failed)
	}
	merged := filepath.Join(dir, "merged")
	m := conform(t, append(append([]string{"merge"}, shardDirs(dir, 2)...), "--report-dir", merged)...)
	if m.code != 1 || !strings.Contains(m.stdout, "NOT CONFORMANT") {
		t.Fatalf("merge exit %d, want 1\n%s%s", m.code, m.stdout, m.stderr)
	}
	got := readRun(t, merged)
	row := exploreRowOf(t, got)
	if row.Status != reports.StatusFailed || len(row.Failures) != failures || len(got.Explore.Failed) != ledger || ledger == 0 {
		t.Errorf("merged row %s with %d failures (shards %d), ledger %d (shards %d)", row.Status, len(row.Failures), failures, len(got.Explore.Failed), ledger)
	}
	for _, e := range got.Explore.Failed {
		if e.Seed == 0 || !strings.Contains(e.Repro, "hist=") || e.Obligation == "" {
			t.Errorf("ledger entry without a seed, a repro or an obligation: %+v", e)
		}
	}
	if row.Repro == "" || !strings.Contains(string(mustRead(t, filepath.Join(merged, "report.md"))), "explore-histories") {
		t.Errorf("the merged reports do not show the failed row and its repro")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeRefusesShardsOfDifferentCampaigns: shards of different seeds,
// stores or harness versions, the same shard twice, a shard missing and
// the report of an unsharded run are refused with exit 2 and one line
// that says what is wrong.
func TestMergeRefusesShardsOfDifferentCampaigns(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	b := filepath.Join(dir, "b")
	res := parallel(t, dir, append(append(shardArgs(a, 2, "explore", "--histories", "8", "--seed", "3"),
		shardArgs(b, 2, "explore", "--histories", "8", "--seed", "4")...),
		[]string{"explore", "--histories", "8", "--seed", "3", "--store", "canary:reversed-append", "--shard", "1/2", "--report-dir", filepath.Join(dir, "other-store")},
		[]string{"explore", "--histories", "8", "--seed", "3", "--report-dir", filepath.Join(dir, "whole")})...)
	for _, r := range res {
		if r.code > 1 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}
	a0, a1 := filepath.Join(a, "shard-0"), filepath.Join(a, "shard-1")
	old := filepath.Join(dir, "old-version")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	js := strings.Replace(string(mustRead(t, filepath.Join(a1, "report.json"))), `"version": "`+engine.Version+`"`, `"version": "0.0.9"`, 1)
	if err := os.WriteFile(filepath.Join(old, "report.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{a0, filepath.Join(b, "shard-1")}, "different seeds (3, 4)"},
		{[]string{a0, filepath.Join(dir, "other-store")}, "different stores"},
		{[]string{a0, old}, "different harness versions (conform " + engine.Version + ", conform 0.0.9)"},
		{[]string{a0, a1, a0}, "shard 0/2 given twice"},
		{[]string{a1}, "shard 0/2 missing"},
		{[]string{a0, a1, filepath.Join(dir, "whole")}, "unsharded run"},
		{[]string{a0, filepath.Join(dir, "nowhere")}, "nowhere"},
	} {
		out := filepath.Join(dir, "merged")
		r := conform(t, append(append([]string{"merge"}, c.dirs...), "--report-dir", out)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("merge %v: exit %d, want 2 and one line saying %q:\n%s", c.dirs, r.code, c.want, r.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("merge %v wrote reports though it refused", c.dirs)
		}
	}
	if r := conform(t, "merge", a0, a1, "--report-dir", filepath.Join(dir, "ok")); r.code != 0 && r.code != 1 {
		t.Errorf("merge of both shards: exit %d\n%s", r.code, r.stderr)
	}
}

// TestShardFlagBadInputExitsTwo: a shard index out of range, a count
// below 1, garbage, or a shard without a seed is refused with exit 2 and
// one line naming --shard.
func TestShardFlagBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"explore", "--seed", "1", "--shard", "4/4"},
		{"explore", "--seed", "1", "--shard", "-1/4"},
		{"explore", "--seed", "1", "--shard", "0/0"},
		{"explore", "--seed", "1", "--shard", "two/4"},
		{"explore", "--seed", "1", "--shard", "1"},
		{"explore", "--seed", "1", "--shard", "1/4/2"},
		{"explore", "--shard", "1/4"},
		{"explore", "--seed", "1", "--histories", "3", "--shard", "1/4"},
		{"run", "--seed", "1", "--shard", "2/2"},
		{"run", "--shard", "0/2"},
	} {
		r := conform(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "--shard") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("conform %v: exit %d, want 2 and one line naming --shard:\n%s", args, r.code, r.stderr)
		}
	}
}

// TestRunShardsSplitTheRows: `conform run --shard i/3` runs each selected
// row in exactly one shard but the exploration's, which every shard runs
// over its part of the histories, and the merge gives the unsharded
// run's rows, histories and verdict.
func TestRunShardsSplitTheRows(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--label-filter", "chapter:host-store || chapter:explore", "--explore-histories", "300", "--seed", "5"}
	res := parallel(t, dir, append(shardArgs(dir, 3, args...), append(slices.Clone(args), "--report-dir", filepath.Join(dir, "whole")))...)
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
	}
	whole := readRun(t, filepath.Join(dir, "whole"))
	ranIn := map[reports.RowID]int{}
	for _, d := range shardDirs(dir, 3) {
		for _, row := range readRun(t, d).Rows {
			if !row.NotSelected {
				ranIn[row.ID]++
			}
		}
	}
	for _, row := range whole.Selected() {
		if want := map[bool]int{true: 3, false: 1}[row.ID == exploreRow]; ranIn[row.ID] != want {
			t.Errorf("row %s ran in %d shards, want %d", row.ID, ranIn[row.ID], want)
		}
	}
	if len(whole.Selected()) < 5 {
		t.Fatalf("the unsharded run selected %d rows", len(whole.Selected()))
	}
	merged := filepath.Join(dir, "merged")
	if m := conform(t, append(append([]string{"merge"}, shardDirs(dir, 3)...), "--report-dir", merged)...); m.code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	got := readRun(t, merged)
	if len(got.Rows) != len(whole.Rows) || got.Verdict() != whole.Verdict() {
		t.Fatalf("merged %d rows, %s; unsharded %d rows, %s", len(got.Rows), got.Verdict(), len(whole.Rows), whole.Verdict())
	}
	for i, row := range got.Rows {
		if w := whole.Rows[i]; row.ID != w.ID || row.Status != w.Status || row.NotSelected != w.NotSelected || !slices.Equal(row.NotExercised, w.NotExercised) {
			t.Errorf("row %s: merged %s (not selected %v), unsharded %s (%v)", row.ID, row.Status, row.NotSelected, w.Status, w.NotSelected)
		}
	}
	a, b := slices.Clone(got.Explore.Seeds), slices.Clone(whole.Explore.Seeds)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) || len(a) != 300 {
		t.Errorf("merged %d history seeds, unsharded %d, not the same", len(a), len(b))
	}
}

// TestReplayLedgerReplaysFailingHistoriesFirst: the failing histories a
// report records are a ledger. `conform explore --replay` plays them
// before its own: against a store without the bug each is shown as
// replayed from the ledger and passing (the bug confirmed fixed);
// against the store with it they fail again, shown as replayed from the
// ledger. Shards split the ledger too.
func TestReplayLedgerReplaysFailingHistoriesFirst(t *testing.T) {
	dir := t.TempDir()
	found := filepath.Join(dir, "found")
	if r := conform(t, "explore", "--store", "canary:reversed-append", "--histories", "30", "--seed", "7", "--report-dir", found); r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	ledger := readRun(t, found).Explore.Failed
	if len(ledger) == 0 {
		t.Fatal("the buggy store's run recorded no failing history")
	}

	fixed := filepath.Join(dir, "fixed")
	r := conform(t, "explore", "--histories", "20", "--seed", "8", "--replay", found, "--report-dir", fixed)
	if r.code != 0 || strings.Count(r.stdout, "LEDGER replayed from the ledger: history ") != len(ledger) {
		t.Fatalf("exit %d, want 0 and %d LEDGER lines\n%s%s", r.code, len(ledger), r.stdout, r.stderr)
	}
	run := readRun(t, fixed)
	x := run.Explore
	if len(x.Replayed) != len(ledger) || len(x.Seeds) != 20 || x.Played != 20+len(ledger) || len(x.Failed) != 0 {
		t.Fatalf("replayed %d of %d, budget %d, played %d, failed %d", len(x.Replayed), len(ledger), len(x.Seeds), x.Played, len(x.Failed))
	}
	for i, e := range x.Replayed {
		if e.Failed || e.Seed != ledger[i].Seed || e.Repro != ledger[i].Repro {
			t.Errorf("replay %d: %+v, ledger %+v", i, e, ledger[i])
		}
	}
	if out := exploreRowOf(t, run).Output; !strings.Contains(out, "replayed from the ledger: history ") {
		t.Errorf("the row's output does not show the replays:\n%s", out)
	}

	again := filepath.Join(dir, "again")
	res := parallel(t, dir, shardArgs(again, 2, "explore", "--store", "canary:reversed-append", "--histories", "2", "--seed", "9", "--replay", filepath.Join(found, "report.json"))...)
	var replayed []uint64
	failedAgain := 0
	for i, d := range shardDirs(again, 2) {
		if res[i].code != 1 {
			t.Fatalf("shard %d: exit %d, want 1\n%s", i, res[i].code, res[i].stderr)
		}
		run := readRun(t, d)
		for _, e := range run.Explore.Replayed {
			replayed = append(replayed, e.Seed)
			if e.Failed {
				failedAgain++
			}
		}
		for _, f := range exploreRowOf(t, run).Failures {
			if strings.HasPrefix(f.Message, "replayed from the ledger: ") && !strings.Contains(res[i].stdout, "FINDING replayed from the ledger: ") {
				t.Errorf("shard %d: a replayed failure is not shown as one on the console", i)
			}
		}
	}
	var want []uint64
	for _, e := range ledger {
		want = append(want, e.Seed)
	}
	slices.Sort(want)
	slices.Sort(replayed)
	if !slices.Equal(replayed, want) || failedAgain == 0 {
		t.Errorf("the shards replayed %d histories of the ledger's %d, %d failed again", len(replayed), len(want), failedAgain)
	}
}

// TestOneShardCampaignMerges: a campaign of one shard (a Job of one
// completion) records its shard, and merges alone.
func TestOneShardCampaignMerges(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "shard-0")
	if r := conform(t, "explore", "--histories", "300", "--shard", "0/1", "--report-dir", one); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if run := readRun(t, one); run.Shard == nil || *run.Shard != (reports.Shard{Index: 0, Count: 1}) || len(run.Explore.Seeds) != 300 {
		t.Fatalf("shard %v, %d histories", run.Shard, len(run.Explore.Seeds))
	}
	if r := conform(t, "merge", one, "--report-dir", filepath.Join(dir, "merged")); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := conform(t, "reproduce", "--shard", "0/2", "v1;seed=1;row=kill"); r.code != 2 || !strings.Contains(r.stderr, "--shard") {
		t.Errorf("reproduce --shard: exit %d\n%s", r.code, r.stderr)
	}
}

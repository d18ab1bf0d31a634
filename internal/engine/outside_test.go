//go:build unix

package engine

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/reports"
)

// TestReadReportRefusesWhatIsNotABoundedFile: a report.json that links to
// /dev/zero, a named pipe with no writer and a sparse file of 10 GiB are
// each refused at once, before a byte is read, saying what they are.
func TestReadReportRefusesWhatIsNotABoundedFile(t *testing.T) {
	for name, c := range map[string]struct {
		make func(path string) error
		why  string
	}{
		"link to /dev/zero": {func(p string) error { return os.Symlink("/dev/zero", p) }, "is a character device, not a regular file"},
		"named pipe":        {func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a named pipe, not a regular file"},
		"directory":         {func(p string) error { return os.Mkdir(p, 0o755) }, "is a directory, not a regular file"},
		"sparse 10 GiB": {func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			return errors.Join(f.Truncate(10<<30), f.Close())
		}, "holds 10737418240 bytes, more than the 512 MiB"},
	} {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			if err := c.make(filepath.Join(dir, "report.json")); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := ReadReport(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.why) {
					t.Errorf("ReadReport = %v, want an error saying %q", err, c.why)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("ReadReport still reads after 5s")
			}
		})
	}
}

// TestCheckReportNamesTheField: a shard whose numbers or statuses are
// none conform writes is refused by merge, naming the shard and the
// field; the sound shards merge.
func TestCheckReportNamesTheField(t *testing.T) {
	ids := itemIDs(func(xp.Item) bool { return true })
	sound := func() []shardReport {
		return []shardReport{{From: "a.json", Run: shardRun(0, 2, reports.StatusPassed, ids...)}, {From: "b.json", Run: shardRun(1, 2, reports.StatusPassed, ids...)}}
	}
	if _, err := mergeShards(sound()); err != nil {
		t.Fatalf("sound shards: %v", err)
	}
	for _, c := range []struct {
		bend func(r *reports.Run)
		want string
	}{
		{func(r *reports.Run) { r.Rows[1].Status = "passed!" }, `b.json: rows[1].status "passed!" is not a status`},
		{func(r *reports.Run) { r.Rows[0].Duration = -1 }, "b.json: rows[0].duration_ns -1 is negative"},
		{func(r *reports.Run) { r.Duration = -1 }, "b.json: duration_ns -1 is negative"},
		{func(r *reports.Run) { r.MergedFrom = 3 }, "b.json: merged_from 3"},
		{func(r *reports.Run) { r.Explore.Played = -1 }, "b.json: explore.played -1 is negative"},
		{func(r *reports.Run) { r.Explore.Ops = -1 }, "b.json: explore.ops -1 is negative"},
		{func(r *reports.Run) { r.Explore.Undecided = 6 }, "b.json: explore.undecided 6 is outside 0..5"},
		{func(r *reports.Run) { r.Explore.Coverage[ids[2]] = -1 }, "b.json: explore.coverage[\"" + ids[2] + "\"] -1 is negative"},
		{func(r *reports.Run) { r.Explore.Failed = []reports.LedgerEntry{{Index: -4, Seed: 9}} }, "b.json: explore.failed[0].index -4 is negative"},
		{func(r *reports.Run) { r.Explore.Replayed = []reports.LedgerEntry{{Index: -4, Seed: 9}} }, "b.json: explore.replayed[0].index -4 is negative"},
	} {
		in := sound()
		c.bend(in[1].Run)
		if _, err := mergeShards(in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mergeShards = %v, want an error saying %q", err, c.want)
		}
	}
	for _, c := range []struct {
		bend func(r *reports.Run)
		want string
	}{
		{func(r *reports.Run) { r.Explore.Histories = -1 }, "a.json: explore.histories -1 is outside 0..10000000"},
		{func(r *reports.Run) { r.Explore.Histories = MaxCampaign + 1 }, "a.json: explore.histories 10000001 is outside"},
		{func(r *reports.Run) { r.Explore.Played, r.Explore.Undecided = math.MaxInt, 0 }, "b.json: explore.played: the shards' sum overflows"},
		{func(r *reports.Run) { r.Explore.Ops = math.MaxInt }, "b.json: explore.ops: the shards' sum overflows"},
		{func(r *reports.Run) { r.Explore.Coverage[ids[0]] = math.MaxInt }, "b.json: explore.coverage[\"" + ids[0] + "\"]: the shards' sum overflows"},
	} {
		in := sound()
		c.bend(in[0].Run)
		c.bend(in[1].Run)
		if _, err := mergeShards(in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mergeShards = %v, want an error saying %q", err, c.want)
		}
	}
}

// TestUnknownStatusIsNeverPassed: three shards whose exploration row has
// a status conform does not write are refused; they once merged to
// conformant.
func TestUnknownStatusIsNeverPassed(t *testing.T) {
	ids := itemIDs(func(xp.Item) bool { return true })
	var in []shardReport
	for i := range 3 {
		r := shardRun(i, 3, "bogus", ids...)
		in = append(in, shardReport{From: string(rune('a'+i)) + ".json", Run: r})
	}
	m, err := mergeShards(in)
	if err == nil {
		t.Fatalf("shards of an unknown status merged to %s", m.Verdict())
	}
	if !strings.Contains(err.Error(), `a.json: rows[1].status "bogus"`) {
		t.Errorf("mergeShards = %v, want it to name a.json and rows[1].status", err)
	}
}

// TestMissingShardsAreNamedInPart: one shard of a campaign of 10,000 is
// refused in a short line that names a few shards missing and counts the
// rest.
func TestMissingShardsAreNamedInPart(t *testing.T) {
	_, err := mergeShards([]shardReport{{From: "a.json", Run: shardRun(0, MaxShards, reports.StatusPassed)}})
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "shard 1/10000, 2/10000, ") || !strings.Contains(err.Error(), "10/10000 and 9989 more missing") {
		t.Errorf("mergeShards = %.1000v (%d bytes), want a short line naming ten shards and counting 9989 more", err, len(err.Error()))
	}
	_, err = mergeShards([]shardReport{{From: "a.json", Run: shardRun(1, 3, reports.StatusPassed)}})
	if err == nil || !strings.Contains(err.Error(), "shard 0/3, 2/3 missing") {
		t.Errorf("mergeShards = %v, want it to name both shards missing", err)
	}
}

// TestEmptyReportDirIsRefused: an empty report directory names none,
// even where the current directory could take the reports.
func TestEmptyReportDirIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := checkReportDir(""); err == nil {
		t.Error("checkReportDir(\"\") accepted it")
	}
}

package engine

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// shardReport is the report of one shard, with where it was read from
// (named in a refusal).
type shardReport struct {
	From string
	Run  *reports.Run
}

// mergeShards joins the reports of the shards of one campaign into the report
// of the whole, as one unsharded run with the same seed would have
// written it: each row from the shard that ran it, and the exploration
// row, which every shard runs over its part of the histories, from all of
// them: its histories, operations and coverage added up, its failures
// and ledger joined, and what it left not exercised judged again on the
// sum. The merged verdict follows from those rows. It refuses, naming
// the shards, a report whose numbers or statuses do not hold, reports of
// different seeds, conform versions, stores,
// failpoints or budgets, a report of no shard, the same shard twice and a
// shard missing.
func mergeShards(shards []shardReport) (*reports.Run, error) {
	if len(shards) == 0 {
		return nil, errors.New("give the report directories of the shards")
	}
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	slices.SortFunc(shards, func(a, b shardReport) int { return a.Run.Shard.Index - b.Run.Shard.Index })
	first := shards[0].Run
	out := &reports.Run{
		Schema:               reports.SchemaVersion,
		Tool:                 first.Tool,
		Version:              first.Version,
		Store:                first.Store,
		Seed:                 first.Seed,
		Failpoints:           first.Failpoints,
		WithoutInStoreFaults: first.WithoutInStoreFaults,
		Obligations:          first.Obligations,
		MergedFrom:           len(shards),
		LabelFilter:          first.LabelFilter,
	}
	var end time.Time
	for _, s := range shards {
		r := s.Run
		if out.Start.IsZero() || r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if e := r.Start.Add(r.Duration); e.After(end) {
			end = e
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.LabelFilter != out.LabelFilter {
			out.LabelFilter = "" // run's shards each narrow it to their rows
		}
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, "shard "+r.Shard.String()+": "+w)
		}
	}
	out.Duration = end.Sub(out.Start)
	x, err := mergeExploration(shards)
	if err != nil {
		return nil, err
	}
	out.Explore = x
	for i, row := range first.Rows {
		var ran []reports.Row
		var from []string
		for _, s := range shards {
			r := s.Run.Rows[i]
			if !r.NotSelected {
				ran = append(ran, r)
				from = append(from, s.Run.Shard.String())
			}
		}
		switch {
		case len(ran) == 0:
			out.Rows = append(out.Rows, row)
		case len(ran) == 1:
			out.Rows = append(out.Rows, ran[0])
		case row.ID != explore.RowID:
			return nil, fmt.Errorf("row %s ran in shards %s: the shards do not split the same rows", textsafe.Clip(string(row.ID), maxShown), listSome(from))
		default:
			out.Rows = append(out.Rows, mergeExploreRow(ran, from, x))
		}
	}
	return out, nil
}

// checkShards refuses shards that are not of one campaign, or not all of
// it: each must hold numbers and statuses conform writes (checkReport),
// record its shard, and agree with the first on the seed,
// the tool and its version, the store, the failpoints, the declaration
// of no in-store sites, the count of shards, the rows and the budget; no
// shard may come twice, and none may be missing.
func checkShards(shards []shardReport) error {
	for _, s := range shards {
		if err := checkReport(s.Run); err != nil {
			return fmt.Errorf("%s: %v", s.From, err)
		}
		if s.Run.Shard == nil {
			return fmt.Errorf("%s is the report of an unsharded run (no shard recorded); merge takes the reports of 'conform explore --shard i/N' or 'conform run --shard i/N'", s.From)
		}
		sh := s.Run.Shard
		if err := checkShard(sh.Index, sh.Count); err != nil {
			return fmt.Errorf("%s records shard %d of %d, which no campaign has: %v", s.From, sh.Index, sh.Count, err)
		}
	}
	a := shards[0]
	n := a.Run.Shard.Count
	seen := map[int]string{}
	for _, s := range shards {
		r := s.Run
		differ := func(what, x, y string) error {
			return fmt.Errorf("%s and %s are of different %s (%s, %s): not shards of one campaign", a.From, s.From, what, textsafe.Clip(x, maxShown), textsafe.Clip(y, maxShown))
		}
		switch {
		case r.Seed != a.Run.Seed:
			return differ("seeds", fmt.Sprint(a.Run.Seed), fmt.Sprint(r.Seed))
		case r.Tool != a.Run.Tool || r.Version != a.Run.Version:
			return differ("harness versions", a.Run.Tool+" "+a.Run.Version, r.Tool+" "+r.Version)
		case r.Store != a.Run.Store:
			return differ("stores", fmt.Sprintf("%q", a.Run.Store), fmt.Sprintf("%q", r.Store))
		case r.Shard.Count != n:
			return differ("shard counts", a.Run.Shard.String(), r.Shard.String())
		case !slices.Equal(r.Failpoints, a.Run.Failpoints):
			return differ("failpoints", strings.Join(a.Run.Failpoints, " "), strings.Join(r.Failpoints, " "))
		case r.WithoutInStoreFaults != a.Run.WithoutInStoreFaults:
			return differ("declarations of in-store sites", fmt.Sprint(a.Run.WithoutInStoreFaults), fmt.Sprint(r.WithoutInStoreFaults))
		case budget(r) != budget(a.Run):
			return differ("exploration budgets", fmt.Sprint(budget(a.Run)), fmt.Sprint(budget(r)))
		case !sameRows(r, a.Run):
			return differ("rows", rowIDs(a.Run), rowIDs(r))
		}
		if prev, ok := seen[r.Shard.Index]; ok {
			return fmt.Errorf("shard %s given twice: %s and %s", r.Shard, prev, s.From)
		}
		seen[r.Shard.Index] = s.From
	}
	var missing []string
	for i := range n {
		if _, ok := seen[i]; !ok {
			missing = append(missing, reports.Shard{Index: i, Count: n}.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s missing: a merge needs all %d shards of the campaign", listSome(missing), n)
	}
	return nil
}

// budget returns the exploration budget r records, -1 when none.
func budget(r *reports.Run) int {
	if r.Explore == nil {
		return -1
	}
	return r.Explore.Histories
}

func sameRows(a, b *reports.Run) bool {
	return slices.EqualFunc(a.Rows, b.Rows, func(x, y reports.Row) bool { return x.ID == y.ID })
}

func rowIDs(r *reports.Run) string {
	ids := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		ids[i] = string(row.ID)
	}
	return strings.Join(ids, ",")
}

// mergeExploration adds up the shards' explorations, in shard order; nil
// when none ran the chapter. A history seed played by two shards is
// refused: the shards overlap.
func mergeExploration(shards []shardReport) (*reports.Exploration, error) {
	var out *reports.Exploration
	by := map[uint64]string{}
	for _, s := range shards {
		x := s.Run.Explore
		if x == nil {
			continue
		}
		if out == nil {
			out = &reports.Exploration{Histories: x.Histories, Seeds: []uint64{}, Coverage: map[string]int{}}
		}
		var ok [3]bool
		out.Played, ok[0] = addCount(out.Played, x.Played)
		out.Ops, ok[1] = addCount(out.Ops, x.Ops)
		out.Undecided, ok[2] = addCount(out.Undecided, x.Undecided)
		for i, field := range []string{"explore.played", "explore.ops", "explore.undecided"} {
			if !ok[i] {
				return nil, fmt.Errorf("%s: %s: the shards' sum overflows", s.From, field)
			}
		}
		out.Stopped = out.Stopped || x.Stopped
		for _, seed := range x.Seeds {
			if prev, ok := by[seed]; ok {
				return nil, fmt.Errorf("history seed %d played by shard %s and shard %s: the shards overlap", seed, prev, s.Run.Shard)
			}
			by[seed] = s.Run.Shard.String()
		}
		out.Seeds = append(out.Seeds, x.Seeds...)
		for k, v := range x.Coverage {
			sum, ok := addCount(out.Coverage[k], v)
			if !ok {
				return nil, fmt.Errorf("%s: explore.coverage[%s]: the shards' sum overflows", s.From, textsafe.Clip(fmt.Sprintf("%q", k), maxShown))
			}
			out.Coverage[k] = sum
		}
		out.Failed = append(out.Failed, x.Failed...)
		out.Replayed = append(out.Replayed, x.Replayed...)
	}
	return out, nil
}

// mergeExploreRow joins the exploration row of several shards (named by
// from): failed when any failed, not run when any did not run, else
// passed, with what the summed exploration x never reached as not
// exercised.
func mergeExploreRow(rows []reports.Row, from []string, x *reports.Exploration) reports.Row {
	out := rows[0]
	out.Failures, out.NotExercised, out.Output, out.Repro, out.Duration = nil, nil, "", "", 0
	failed, notRun := false, false
	var notRunWhy []string
	for i, r := range rows {
		out.Duration = max(out.Duration, r.Duration)
		out.Failures = append(out.Failures, r.Failures...)
		out.Output += "shard " + from[i] + ":\n" + r.Output
		if !strings.HasSuffix(out.Output, "\n") {
			out.Output += "\n"
		}
		switch r.Status {
		case reports.StatusFailed:
			if !failed {
				out.Repro = r.Repro
			}
			failed = true
		case reports.StatusNotRun:
			notRun = true
			for _, why := range r.NotExercised {
				notRunWhy = append(notRunWhy, "shard "+from[i]+": "+why)
			}
		}
	}
	out.InStoreOnly = false
	switch {
	case failed:
		out.Status = reports.StatusFailed
	case notRun:
		out.Status = reports.StatusNotRun
		out.NotExercised = notRunWhy
	default:
		out.Status = reports.StatusPassed
		if x == nil {
			break
		}
		gaps := explore.NotReached(explore.Outcome{Played: x.Played, Coverage: explore.CoverageOf(x), Undecided: x.Undecided})
		inStore := 0
		for _, g := range gaps {
			out.NotExercised = append(out.NotExercised, explore.SpecText+": "+g.Part+": "+g.Why)
			if g.InStore {
				inStore++
			}
		}
		out.InStoreOnly = inStore > 0 && inStore == len(gaps)
	}
	return out
}

// cmdMerge is `conform merge DIR... --report-dir OUT`: it reads the
// report.json of each shard (a directory or the file itself), joins them
// (Merge), writes the four reports into OUT and prints the summary. It
// returns 2 when it refuses the shards or cannot write, 1 when the merged
// verdict does not pass, 0 when it does.
func (c Command) cmdMerge(args []string, stdout, stderr io.Writer) int {
	const name = "merge"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("report-dir", "conform-report", "where the four merged reports go")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: conform merge DIR... [--report-dir OUT]\n\njoins the reports of a campaign's shards (each DIR a shard's report directory or its report.json) into one set of four reports; refuses shards of different seeds, versions or stores, a shard twice or one missing\n\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return refuse(stderr, name, "%v (see 'conform merge -h')", err)
	}
	if len(pos) == 0 {
		return refuse(stderr, name, "give the report directories of the shards, e.g. conform merge shard-0 shard-1 --report-dir merged")
	}
	if err := checkReportDir(*out); err != nil {
		return refuse(stderr, name, "--report-dir %q: %v", *out, err)
	}
	var shards []shardReport
	var total int64
	for _, p := range pos {
		if filepath.Clean(p) == filepath.Clean(*out) {
			return refuse(stderr, name, "--report-dir %q is one of the shards' directories: merge into another", *out)
		}
		run, file, size, err := readReportAt(p)
		if err != nil {
			return refuse(stderr, name, "%v", err)
		}
		if total += size; total > MaxMergeSize {
			return refuse(stderr, name, "the shards' reports up to %s hold %d bytes, more than one merge reads (%d MiB)", file, total, MaxMergeSize>>20)
		}
		shards = append(shards, shardReport{From: file, Run: run})
	}
	run, err := mergeShards(shards)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	var werr error
	if *out != "-" {
		werr = reports.WriteAll(*out, run)
	}
	fmt.Fprintf(stdout, "conform %s: merged %d shards of %s (seed %d)\n", Version, run.MergedFrom, textsafe.Line(textsafe.Clip(run.Store, maxShown)), run.Seed)
	for _, s := range shards {
		fmt.Fprintf(stdout, "  shard %s: %s (%s)\n", s.Run.Shard, s.Run.Verdict().Label(), textsafe.Line(s.From))
	}
	if x := run.Explore; x != nil {
		fmt.Fprintf(stdout, "  exploration: %d histories played (%d of the budget of %d, %d replayed from a ledger), %d operations, %d failed\n",
			x.Played, len(x.Seeds), x.Histories, len(x.Replayed), x.Ops, len(x.Failed))
	}
	summary(stdout, run, *out, werr)
	if werr != nil {
		return refuse(stderr, name, "%v", werr)
	}
	if !run.Verdict().Passing() {
		return ExitNotConformant
	}
	return ExitConformant
}

// maxShown bounds the bytes of one value from a shard (a store's name, a
// list of rows) that a line of merge shows; maxListed bounds the items of
// a list it names.
const (
	maxShown  = 200
	maxListed = 10
)

// listSome returns the first maxListed of items joined by ", ", and how
// many more there are when there are more.
func listSome(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}

// knownStatus reports whether s is one of the four statuses a row has.
func knownStatus(s reports.Status) bool {
	switch s {
	case reports.StatusPassed, reports.StatusFailed, reports.StatusNotExercised, reports.StatusNotRun:
		return true
	}
	return false
}

// checkReport returns, naming the field as report.json spells it, why r
// is no report conform writes: a negative duration, count or index, a
// budget beyond MaxCampaign, more undecided histories than played, a
// merge recorded in a shard, or a row status none of the four. It returns nil for a report
// whose numbers and statuses hold.
func checkReport(r *reports.Run) error {
	if r.Duration < 0 {
		return fmt.Errorf("duration_ns %d is negative", r.Duration)
	}
	if r.MergedFrom != 0 && r.Shard != nil {
		return fmt.Errorf("merged_from %d: the report of a shard records no merge", r.MergedFrom)
	}
	if r.MergedFrom < 0 {
		return fmt.Errorf("merged_from %d is negative", r.MergedFrom)
	}
	for i, row := range r.Rows {
		switch {
		case !knownStatus(row.Status):
			return fmt.Errorf("rows[%d].status %s is not a status conform writes (passed, failed, not-exercised, not-run)", i, textsafe.Clip(fmt.Sprintf("%q", row.Status), maxShown))
		case row.Duration < 0:
			return fmt.Errorf("rows[%d].duration_ns %d is negative", i, row.Duration)
		}
	}
	x := r.Explore
	if x == nil {
		return nil
	}
	switch {
	case x.Histories < 0 || x.Histories > MaxCampaign:
		return fmt.Errorf("explore.histories %d is outside 0..%d", x.Histories, MaxCampaign)
	case x.Played < 0:
		return fmt.Errorf("explore.played %d is negative", x.Played)
	case x.Ops < 0:
		return fmt.Errorf("explore.ops %d is negative", x.Ops)
	case x.Undecided < 0 || x.Undecided > x.Played:
		return fmt.Errorf("explore.undecided %d is outside 0..%d (explore.played)", x.Undecided, x.Played)
	}
	for k, v := range x.Coverage {
		if v < 0 {
			return fmt.Errorf("explore.coverage[%s] %d is negative", textsafe.Clip(fmt.Sprintf("%q", k), maxShown), v)
		}
	}
	for i, e := range x.Failed {
		if e.Index < 0 {
			return fmt.Errorf("explore.failed[%d].index %d is negative", i, e.Index)
		}
	}
	for i, e := range x.Replayed {
		if e.Index < 0 {
			return fmt.Errorf("explore.replayed[%d].index %d is negative", i, e.Index)
		}
	}
	return nil
}

// addCount returns a+b for counts a and b, both at least 0, and false
// when the sum does not fit an int.
func addCount(a, b int) (int, bool) {
	if a > math.MaxInt-b {
		return 0, false
	}
	return a + b, true
}

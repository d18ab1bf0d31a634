package engine

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/internal/spec"
	"github.com/conform-spi/conform/reports"
)

// WithShard makes the run shard index of count, index counting from 0
// (as Kubernetes' $JOB_COMPLETION_INDEX does): the exploration chapter
// plays only the histories i with i%count == index (and replays only the
// ledger's entries k with k%count == index). The command's `run --shard`
// also splits the other rows (rowInShard). The count shards of one seed
// together play every history of the budget once, and `conform merge`
// joins their reports into the report of one unsharded run.
func WithShard(index, count int) Option {
	return func(o *Options) { o.Shard = reports.Shard{Index: index, Count: count} }
}

// WithLedger replays the failing exploration histories of ledger, each
// once and generated from its seed, before the budget's histories; each
// shows in the output and the reports as replayed from the ledger.
func WithLedger(ledger []reports.LedgerEntry) Option {
	return func(o *Options) { o.Ledger = append([]reports.LedgerEntry(nil), ledger...) }
}

// MaxShards is the most shards a campaign may have.
const MaxShards = 10_000

// parseShard parses "i/N", a shard index counting from 0 and a count of
// shards: 0 <= i < N <= MaxShards.
func parseShard(s string) (reports.Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return reports.Shard{}, fmt.Errorf("--shard %q: want i/N, shard i of N counting from 0 (e.g. 0/4)", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return reports.Shard{}, fmt.Errorf("--shard %q: want i/N with whole numbers, shard i of N counting from 0 (e.g. 0/4)", s)
	}
	if err := checkShard(i, n); err != nil {
		return reports.Shard{}, fmt.Errorf("--shard %q: %v", s, err)
	}
	return reports.Shard{Index: i, Count: n}, nil
}

// checkShard returns why no campaign has shard index of count, or nil
// when 0 <= index < count <= MaxShards.
func checkShard(index, count int) error {
	switch {
	case count < 1:
		return errors.New("the count of shards must be at least 1")
	case count > MaxShards:
		return fmt.Errorf("the count of shards must be at most %d", MaxShards)
	case index < 0 || index >= count:
		return fmt.Errorf("the shard index counts from 0 and must be below %d", count)
	}
	return nil
}

// rowInShard reports whether row id belongs to shard index of count:
// the FNV-1a hash (32 bits) of the row's ID, modulo count, is index. It
// depends on the ID alone, so every machine splits the rows the same way.
func rowInShard(id reports.RowID, index, count int) bool {
	if count <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32()%uint32(count)) == index
}

// shardFilter returns label filter f narrowed to the rows of shard s among
// the chapters o runs: the rows whose ID hashes to the shard
// (rowInShard), and the exploration row in every shard, which splits its
// histories instead. It refuses a shard that holds no row.
func shardFilter(f string, s reports.Shard, o Options) (string, error) {
	if s.Count <= 1 {
		return f, nil
	}
	chs := activeChapters(o)
	sel, err := selection(f, chs)
	if err != nil {
		return "", err
	}
	var rows []string
	for _, ch := range chs {
		for _, r := range ch.Rows() {
			if sel[r.ID] && (r.ID == explore.RowID || rowInShard(r.ID, s.Index, s.Count)) {
				rows = append(rows, r.ID.Label())
			}
		}
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("--shard %s holds no row of the %d selected: use fewer shards", s, len(sel))
	}
	return joinFilters(f, strings.Join(rows, " || ")), nil
}

// shardOf returns the run's shard for its report: nil when unsharded
// (a shard 0/1 is recorded, so that a campaign of one shard merges).
func shardOf(o Options) *reports.Shard {
	if o.Shard.Count < 1 {
		return nil
	}
	s := o.Shard
	return &s
}

// exploration returns the exploration chapter's record from the specs'
// results, nil when the chapter did not run.
func exploration(specs []*spec.Result) *reports.Exploration {
	for _, sr := range specs {
		if sr.Exploration != nil {
			return sr.Exploration
		}
	}
	return nil
}

// ReadLedger returns the failing exploration histories a report records
// (its exploration's Failed), from path: a report.json, or a directory
// holding one. Each seed comes once, in the report's order. A report
// without an exploration holds no ledger and is refused.
func ReadLedger(path string) ([]reports.LedgerEntry, error) {
	run, file, _, err := readReportAt(path)
	if err != nil {
		return nil, err
	}
	if err := checkReport(run); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if run.Explore == nil {
		return nil, fmt.Errorf("%s records no exploration, so no failing histories to replay", path)
	}
	var out []reports.LedgerEntry
	seen := map[uint64]bool{}
	for _, e := range run.Explore.Failed {
		if !seen[e.Seed] {
			seen[e.Seed] = true
			e.Failed = false
			out = append(out, e)
		}
	}
	return out, nil
}

// campaignFlags checks `conform explore`'s --shard and --replay against
// the other flags f: a shard needs a seed given (every shard must play
// the same one) and at least one history of the budget. It returns the
// shard (the zero Shard when not given) and the ledger's entries.
func campaignFlags(shard, replay string, f settings.Flags) (reports.Shard, []reports.LedgerEntry, error) {
	var sh reports.Shard
	if shard != "" {
		var err error
		if sh, err = parseShard(shard); err != nil {
			return sh, nil, err
		}
		if sh.Count > 1 && f.Seed == 0 {
			return sh, nil, fmt.Errorf("--shard %s needs --seed N: every shard of a campaign must play the same seed", sh)
		}
		if f.Explore < sh.Count {
			return sh, nil, fmt.Errorf("--shard %s with --histories %d: give at least one history a shard", sh, f.Explore)
		}
	}
	if replay == "" {
		return sh, nil, nil
	}
	ledger, err := ReadLedger(replay)
	if err != nil {
		return sh, nil, fmt.Errorf("--replay %q: %v", replay, err)
	}
	return sh, ledger, nil
}

// runShard checks `conform run`'s --shard against the other flags f (a
// shard needs a seed, from --seed or the environment) and returns the
// shard and label filter narrowed to its rows (shardFilter).
func runShard(shard, filter string, f settings.Flags) (reports.Shard, string, error) {
	if shard == "" {
		return reports.Shard{}, filter, nil
	}
	sh, err := parseShard(shard)
	if err != nil {
		return sh, "", err
	}
	if sh.Count > 1 && f.Seed == 0 {
		return sh, "", fmt.Errorf("--shard %s needs a seed (--seed N or $%s): every shard must play the same one", sh, EnvSeed)
	}
	if sh.Count > 1 && f.Explore > 0 && f.Explore < sh.Count {
		return sh, "", fmt.Errorf("--shard %s with --explore-histories %d: give at least one history a shard", sh, f.Explore)
	}
	narrowed, err := shardFilter(filter, sh, Options{Fences: f.Fences, Explore: settings.ExploreOption(f.Explore), ExploreHist: f.Hist, ExploreHistory: f.History})
	return sh, narrowed, err
}

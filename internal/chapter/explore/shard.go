package explore

import (
	"fmt"
	"iter"
	"maps"

	"github.com/conform-spi/conform/internal/chapter"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reports"
)

// planned is one history the chapter plays: its index and seed, and, for
// a replay from a ledger, the ledger's entry.
type planned struct {
	index  int
	seed   uint64
	ledger *reports.LedgerEntry
}

// InShard reports whether item k (a history's index, a ledger entry's
// place) belongs to shard of shards; with shards of 1 or less every item
// does.
func InShard(k, shard, shards int) bool {
	return shards <= 1 || k%shards == shard
}

// plan returns how many histories a run of the chapter with settings x
// plays, and them, in order: a replay (x.ExploreHist) plays its one history
// Replays times; otherwise the ledger's entries of the shard come first,
// each once, then the budget's histories of the shard in index order.
// The histories are made as they are drawn, so that a campaign's budget
// costs no memory up front.
func plan(x settings.Settings) (int, iter.Seq[planned]) {
	seed, only, shard, shards, histories := x.Seed, x.ExploreHist, x.Shard.Index, x.Shard.Count, x.ExploreBudget()
	if only != nil {
		return Replays, func(yield func(planned) bool) {
			for range Replays {
				if !yield(planned{index: *only, seed: xp.HistorySeed(seed, *only)}) {
					return
				}
			}
		}
	}
	n := 0
	for k := range x.Ledger {
		if InShard(k, shard, shards) {
			n++
		}
	}
	if shards > 1 {
		n += (histories + shards - 1 - shard) / shards
	} else {
		n += histories
	}
	return n, func(yield func(planned) bool) {
		for k := range x.Ledger {
			if InShard(k, shard, shards) && !yield(planned{index: x.Ledger[k].Index, seed: x.Ledger[k].Seed, ledger: &x.Ledger[k]}) {
				return
			}
		}
		for i := range histories {
			if InShard(i, shard, shards) && !yield(planned{index: i, seed: xp.HistorySeed(seed, i)}) {
				return
			}
		}
	}
}

// record notes that p was played and judged, failed when hf is not nil,
// and returns the line that says so for a replay from a ledger ("" for
// any other history).
func (o *Outcome) record(p planned, hf *xp.HistoryFinding) string {
	if p.ledger == nil {
		o.Seeds = append(o.Seeds, p.seed)
		return ""
	}
	if o.Ledger == nil {
		o.Ledger = map[uint64]reports.LedgerEntry{}
	}
	e := *p.ledger
	e.Failed = hf != nil
	o.Ledger[p.seed] = e
	o.Replayed = append(o.Replayed, e)
	if hf != nil {
		return fmt.Sprintf("replayed from the ledger: history %d (seed %d) FAILED again: %s", e.Index, e.Seed, hf.Findings[0])
	}
	return fmt.Sprintf("replayed from the ledger: history %d (seed %d) passed", e.Index, e.Seed)
}

// fromLedger returns the ledger's entry of hf when hf was replayed from a
// ledger.
func (o Outcome) fromLedger(hf xp.HistoryFinding) (reports.LedgerEntry, bool) {
	e, ok := o.Ledger[hf.Seed]
	return e, ok
}

// reproOf returns the repro line that plays hf alone: the ledger's own
// for a history replayed from a ledger (the run that found it named it),
// else the run's.
func reproOf(cfg chapter.Config, out Outcome, hf xp.HistoryFinding) string {
	if e, ok := out.fromLedger(hf); ok {
		return e.Repro
	}
	return cfg.Settings.ReproHist(RowID, hf.Index)
}

// failureFor returns the report's failure for hf, saying so when it was
// replayed from a ledger.
func failureFor(cfg chapter.Config, out Outcome, hf xp.HistoryFinding) reports.Failure {
	f := FailureOf(hf, reproOf(cfg, out, hf))
	if _, ok := out.fromLedger(hf); ok {
		f.Message = "replayed from the ledger: " + f.Message
	}
	return f
}

// Exploration returns the report's record of out, a run of the chapter
// with cfg: what it played and reached, and the ledger of its failing
// histories.
func Exploration(cfg chapter.Config, out Outcome) *reports.Exploration {
	x := &reports.Exploration{
		Histories: cfg.Settings.ExploreBudget(),
		Played:    out.Played,
		Ops:       out.Coverage.Ops,
		Undecided: out.Undecided,
		Stopped:   out.Stopped,
		Seeds:     out.Seeds,
		Coverage:  maps.Clone(out.Coverage.Counts),
		Replayed:  out.Replayed,
	}
	if x.Seeds == nil {
		x.Seeds = []uint64{}
	}
	if x.Coverage == nil {
		x.Coverage = map[string]int{}
		for _, it := range xp.Items() {
			x.Coverage[it.ID] = 0
		}
	}
	for _, hf := range out.Failed {
		x.Failed = append(x.Failed, reports.LedgerEntry{Index: hf.Index, Seed: hf.Seed, Obligation: hf.Findings[0].Obligation, Repro: reproOf(cfg, out, hf)})
	}
	return x
}

// CoverageOf returns the coverage counts of a report's exploration as the
// chapter counts them, so that NotReached can judge the sum of several
// shards.
func CoverageOf(x *reports.Exploration) xp.Coverage {
	c := xp.Coverage{Histories: x.Played, Ops: x.Ops, Counts: maps.Clone(x.Coverage)}
	if c.Counts == nil {
		c.Counts = map[string]int{}
	}
	return c
}

// SpecText is the text of the row's one spec, which heads each part of
// the row the reports list as not exercised.
const SpecText = specText

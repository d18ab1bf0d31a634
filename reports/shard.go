package reports

import "fmt"

// Shard names one part of a campaign split over several processes: shard
// Index of Count, Index counting from 0 (as Kubernetes'
// $JOB_COMPLETION_INDEX does). The Count shards of one seed together do
// exactly what one unsharded run with that seed does.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String returns the shard as "i/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Exploration is what the exploration chapter played and reached, in a
// form a merge of shards can add up and a later campaign can replay from.
type Exploration struct {
	// Histories is the budget of the whole campaign (of every shard).
	Histories int `json:"histories"`
	// Played counts the histories played and judged here, replays from a
	// ledger included.
	Played int `json:"played"`
	// Ops counts their operations.
	Ops int `json:"ops"`
	// Undecided counts the histories whose check ran out of its bound.
	Undecided int `json:"undecided,omitempty"`
	// Stopped is set when the run ended before its budget.
	Stopped bool `json:"stopped,omitempty"`
	// Seeds are the seeds of the histories of the budget played here, in
	// play order (replays from a ledger are in Replayed, not here).
	Seeds []uint64 `json:"seeds"`
	// Coverage counts what the histories reached, by coverage item ID
	// (every listed item, zero when never reached) and beyond.
	Coverage map[string]int `json:"coverage"`
	// Failed is the ledger of failing histories: each failed history,
	// with the seed it is generated from and the repro that plays it.
	Failed []LedgerEntry `json:"failed,omitempty"`
	// Replayed are the histories replayed from a ledger before the
	// budget, each with whether it failed again.
	Replayed []LedgerEntry `json:"replayed,omitempty"`
}

// LedgerEntry is one failing history: its index in the run that found it,
// the seed it is generated from (which plays it in any run), the
// obligation it broke first, and the repro line of the run that found it.
type LedgerEntry struct {
	Index      int          `json:"index"`
	Seed       uint64       `json:"seed"`
	Obligation ObligationID `json:"obligation,omitempty"`
	Repro      string       `json:"repro,omitempty"`
	// Failed, for a replay from a ledger, is set when it failed again.
	Failed bool `json:"failed,omitempty"`
}

// campaign returns what the run was of an exploration campaign, in one
// line: its shard (or how many shards it merges), the histories played
// of the budget, those replayed from a ledger and how many failed again,
// and the failing histories its own ledger holds. It returns "" for a run
// that was no shard and ran no exploration.
func (r *Run) campaign() string {
	var parts []string
	switch {
	case r.Shard != nil:
		parts = append(parts, "shard "+r.Shard.String())
	case r.MergedFrom > 0:
		parts = append(parts, fmt.Sprintf("merged from %d shards", r.MergedFrom))
	}
	if x := r.Explore; x != nil {
		parts = append(parts, fmt.Sprintf("%d histories of a budget of %d played", len(x.Seeds), x.Histories))
		if len(x.Replayed) > 0 {
			again := 0
			for _, e := range x.Replayed {
				if e.Failed {
					again++
				}
			}
			parts = append(parts, fmt.Sprintf("%d replayed from a ledger first, %d of them failed again", len(x.Replayed), again))
		}
		parts = append(parts, fmt.Sprintf("%d failing histories in this report's ledger", len(x.Failed)))
	}
	if len(parts) == 0 {
		return ""
	}
	s := parts[0]
	for _, p := range parts[1:] {
		s += "; " + p
	}
	return s
}

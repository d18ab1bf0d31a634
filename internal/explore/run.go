package explore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
)

// Config says how much to explore. Budgets count histories and
// operations, never wall time, so that a run is the same size on any
// machine. The zero value of each field takes the default named.
type Config struct {
	// Seed chooses every history; history i has a seed derived from it.
	Seed uint64
	// Histories is how many histories to run (default 20).
	Histories int
	// MaxOps bounds the operations of one history (default 200). Lengths
	// vary from a few operations up to it.
	MaxOps int
	// MaxProcs bounds the concurrent processes of one history, 1 to 4
	// (default 4).
	MaxProcs int
	// NoFaults turns off injected faults and kills: only the operations.
	NoFaults bool
	// StopAtFirst ends the run after the first history with a finding.
	StopAtFirst bool
	// HistoryTimeout bounds one history's run, as a guard against a
	// store that hangs; calls still running then are recorded as never
	// returned (default 20 s).
	HistoryTimeout time.Duration
	// Check bounds each history's check.
	Check CheckConfig
	// CallBound, when set, returns how long one call of op may take
	// before it is a hang: the history ends there, its context cancelled,
	// and History.Hang names the call. A commit held at an in-store site
	// gets PeekBound more; a peek is bounded by PeekBound alone.
	CallBound func(op Op) time.Duration
	// Observe, when set, is told how long each call that returned took
	// (peeks aside), so that the bounds follow the store's latency.
	Observe func(op Op, took time.Duration)
	// Injector is the run's fault injector: each history's store calls
	// run under a context bound to it, and its holds are armed on it. Nil
	// gives each history an injector of its own.
	Injector *faults.Injector
}

func (c Config) withDefaults() Config {
	if c.Histories <= 0 {
		c.Histories = 20
	}
	if c.MaxOps <= 0 {
		c.MaxOps = 200
	}
	if c.MaxProcs <= 0 || c.MaxProcs > 4 {
		c.MaxProcs = 4
	}
	c.MaxOps = max(c.MaxOps, 3)
	if c.HistoryTimeout <= 0 {
		c.HistoryTimeout = 20 * time.Second
	}
	return c
}

// HistoryFinding is one history that failed its check, kept whole.
type HistoryFinding struct {
	// Index is the history's number in the run, counting from 0.
	Index int `json:"index"`
	// Seed is the history's own seed (HistorySeed(cfg.Seed, Index)).
	Seed uint64 `json:"seed"`
	// Findings are the breaches the check found; the first is the headline.
	Findings []Finding `json:"findings"`
	// History is what ran.
	History *History `json:"history"`
}

// Result is what Run returns.
type Result struct {
	// Histories and Ops count what ran: histories played and judged, and
	// events recorded.
	Histories int `json:"histories"`
	Ops       int `json:"ops"`
	// Undecided counts the histories whose check ran out of its bound.
	Undecided int `json:"undecided"`
	// Failed holds every history with a finding, in run order.
	Failed []HistoryFinding `json:"failed,omitempty"`
}

// HistorySeed returns the seed of history i of a run with seed seed: a
// fixed mix of the two (SplitMix64), the same on every machine.
func HistorySeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Run plays cfg.Histories histories against fresh realms from newRealm,
// each generated from its own seed, and judges each with Check. It
// returns what ran and every history that failed, or an error when a
// realm could not be made or opened at all (nothing to judge). A finding
// is never an error.
func Run(ctx context.Context, newRealm func() (hoststore.HostStoreFactory, error), cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	var res Result
	for i := range cfg.Histories {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		realm, err := newRealm()
		if err != nil {
			return res, fmt.Errorf("explore: history %d: new realm: %w", i, err)
		}
		seed := HistorySeed(cfg.Seed, i)
		h, err := Play(ctx, realm, seed, cfg)
		if err != nil {
			return res, fmt.Errorf("explore: history %d (seed %d): %w", i, seed, err)
		}
		res.Histories++
		res.Ops += len(h.Events)
		v := Check(h, cfg.Check)
		if v.Result == Undecided {
			res.Undecided++
		}
		if len(v.Findings) > 0 {
			res.Failed = append(res.Failed, HistoryFinding{Index: i, Seed: seed, Findings: v.Findings, History: h})
			if cfg.StopAtFirst {
				return res, nil
			}
		}
	}
	return res, nil
}

// Play runs the history seed chooses against realm, one goroutine per
// process, and returns it recorded. It returns an error only when the
// realm cannot open a first handle.
func Play(ctx context.Context, realm hoststore.HostStoreFactory, seed uint64, cfg Config) (*History, error) {
	cfg = cfg.withDefaults()
	p := newPlan(seed, cfg.MaxOps, cfg.MaxProcs)
	pl, release, err := newPlayer(ctx, realm, cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	pl.procs = p.procs
	h := &History{Seed: seed, Procs: p.procs, Lease: pl.lease}
	ws := make([]*genProc, p.procs)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &genProc{proc: &proc{pl: pl, id: i}, ch: chooser{rng: p.procRNG(i), pool: p.pool}, view: map[hoststore.ScopeRef]*belief{}}
		wg.Add(1)
		go func(w *genProc, n int) {
			defer wg.Done()
			defer w.recoverPanic()
			w.run(pl.ctx, n)
		}(ws[i], p.steps[i])
	}
	waitOrEnd(pl.ctx, &wg)
	for _, w := range ws {
		// A process that ignored its context may still be running: its
		// observer is read under its lock, as observer sets it.
		w.mu.Lock()
		o := w.obs
		w.mu.Unlock()
		if o != nil {
			h.Procs++
			h.Events = append(h.Events, o.recorded()...)
		}
		h.Events = append(h.Events, w.recorded()...)
	}
	slices.SortFunc(h.Events, func(a, b Event) int { return int(a.Call - b.Call) })
	for i := range h.Events {
		h.Events[i].ID = i
	}
	pl.mu.Lock()
	if hg := pl.hang; hg != nil {
		for i := range h.Events {
			if h.Events[i].Call == hg.call {
				hg.Event = i
			}
		}
		h.Hang = &hg.Hang
	}
	pl.mu.Unlock()
	return h, nil
}

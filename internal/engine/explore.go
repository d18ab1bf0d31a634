package engine

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/internal/textsafe"
)

// DefaultCampaign is the number of histories `conform explore` plays
// without --histories.
const DefaultCampaign = 10 * DefaultExploreHistories

// MaxCampaign bounds the histories of a campaign with a time budget
// (`conform explore --budget`).
const MaxCampaign = 10_000_000

// cmdExplore is `conform explore`: the exploration chapter alone, over a
// budget of its own, with a live line every second (histories per second,
// operations, coverage items reached, findings so far) and each finding
// printed as it is judged. It writes the same four reports as run; an
// interrupt still writes them.
func (c Command) cmdExplore(args []string, stdout, stderr io.Writer) int {
	const name = "explore"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f settings.Flags
	fs.StringVar(&f.Store, "store", c.Default, "the store's URL ("+strings.Join(c.schemes(), ", ")+")")
	fs.IntVar(&f.Explore, "histories", DefaultCampaign, fmt.Sprintf("how many randomized histories to play, of at most %d operations each", explore.MaxOps))
	parallel := parallelFlag(fs)
	fs.Uint64Var(&f.Seed, "seed", 0, "the seed of every history (0: draw one)")
	fs.StringVar(&f.ReportDir, "report-dir", "conform-report", "where the four reports go")
	callTimeout := fs.Duration("call-timeout", 0, "how long one store call may take before it is a hang (0: derived from the store's latency)")
	withoutInStore := fs.Bool("without-instore-faults", false, "declare that the store calls no in-store site")
	shardFlag := fs.String("shard", "", "play shard i of N of the histories (i counts from 0, as $JOB_COMPLETION_INDEX): those whose index modulo N is i; needs --seed; 'conform merge' joins the shards' reports")
	replay := fs.String("replay", "", "a ledger: a report.json, or a directory holding one, whose failing histories are replayed first, each once")
	budget := fs.Duration("budget", 0, fmt.Sprintf("play histories until this much time has passed (e.g. 10m), instead of a number of them (at most %d)", MaxCampaign))
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: conform explore [flags]\n\nplays randomized concurrent histories against the store and judges each against the model (the exploration chapter alone), with a live line every second; an interrupt (Ctrl-C) still writes the reports\n\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return refuse(stderr, name, "%v (see 'conform explore -h')", err)
	}
	if len(pos) > 0 {
		return refuse(stderr, name, "unexpected argument %q", pos[0])
	}
	if err := checkParallel(*parallel); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if f.Explore < 1 {
		return refuse(stderr, name, "--histories %d: give at least one history", f.Explore)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case given["budget"] && given["histories"]:
		return refuse(stderr, name, "--budget %s and --histories %d: give one budget, a time or a number of histories", *budget, f.Explore)
	case given["budget"] && *budget < time.Second:
		return refuse(stderr, name, "--budget %s: give at least 1s", *budget)
	case given["budget"] && *shardFlag != "":
		return refuse(stderr, name, "--budget with --shard: shards of a campaign play a number of histories, so that together they play each once; give --histories")
	case given["budget"]:
		f.Explore = MaxCampaign
	}
	if err := checkBounds(0, *callTimeout); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	sh, ledger, err := campaignFlags(*shardFlag, *replay, f)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	newRealm, err := c.prepare(&f, *callTimeout)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	live := liveLine{budget: *budget}
	opts := []Option{WithLabelFilter(explore.ID.Label()), WithExplore(f.Explore), WithCallTimeout(*callTimeout), WithExploreProgress(live.update)}
	if *budget > 0 {
		opts = append(opts, func(o *Options) { o.ExploreFor = *budget })
	}
	opts = append(opts, WithExploreParallel(*parallel))
	if *withoutInStore {
		opts = append(opts, WithoutInStoreFaults())
	}
	note := fmt.Sprintf(", %d histories", f.Explore)
	if *budget > 0 {
		note = fmt.Sprintf(", histories for %s", *budget)
	}
	if *parallel > 1 {
		note += fmt.Sprintf(", %d at once", *parallel)
	}
	if sh.Count > 0 {
		opts = append(opts, WithShard(sh.Index, sh.Count))
		note += ", shard " + sh.String()
	}
	if *replay != "" {
		opts = append(opts, WithLedger(ledger))
		note += fmt.Sprintf(", %d failing histories of the ledger replayed first", len(ledger))
	}
	return c.certify(name, newRealm, f, note, opts, live.start, stdout, stderr)
}

// liveLine is the campaign's live line: the latest progress, printed
// every second while it changes, and each finding as it comes.
type liveLine struct {
	mu      sync.Mutex
	out     io.Writer
	st      ExploreStatus
	printed int // histories at the last line
	began   time.Time
	budget  time.Duration // a wall-time budget (--budget), or 0
}

// start begins printing to out every second; the returned function stops
// it and prints the last line.
func (l *liveLine) start(out io.Writer) func() {
	l.mu.Lock()
	l.out, l.began = out, time.Now()
	l.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.print(false)
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		l.print(true)
	}
}

// update takes the chapter's progress after a history; a finding is
// printed at once, so that an interrupt loses none.
func (l *liveLine) update(st ExploreStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st = st
	if st.Replayed != "" && st.Finding == "" && l.out != nil {
		fmt.Fprintf(l.out, "LEDGER %s\n", textsafe.Line(st.Replayed))
	}
	if st.Finding != "" && l.out != nil {
		fmt.Fprintf(l.out, "FINDING %s\n", textsafe.Line(strings.ReplaceAll(st.Finding, "\n", " ")))
	}
}

// print writes the live line, when the progress moved since the last one
// or final is set.
func (l *liveLine) print(final bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.out == nil || (!final && l.st.Histories == l.printed) || l.st.Histories == 0 {
		return
	}
	l.printed = l.st.Histories
	took := time.Since(l.began)
	secs := took.Seconds()
	count := fmt.Sprintf("%d/%d histories", l.st.Histories, l.st.Of)
	if l.budget > 0 {
		count = fmt.Sprintf("%d histories in %s of %s", l.st.Histories, took.Round(time.Second), l.budget)
	}
	fmt.Fprintf(l.out, "explore: %s (%.1f/s), %d operations, coverage %d/%d items, %d findings\n",
		count, float64(l.st.Histories)/max(secs, 1e-3), l.st.Ops, l.st.Reached, l.st.Items, l.st.Findings)
}

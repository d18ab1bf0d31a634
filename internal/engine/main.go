package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/reportdir"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// Opener turns a store URL into a NewRealm: each call of the NewRealm it
// returns makes a fresh, empty realm on that store. An error means the
// store cannot be opened at all (the command exits 2).
type Opener func(ctx context.Context, url string) (NewRealm, error)

// Exit codes of the command.
const (
	ExitConformant    = 0
	ExitNotConformant = 1
	ExitUsage         = 2
)

// Command is a `conform` command: its store openers by URL scheme (the part
// before the first ':'), the default store URL, and extra subcommands.
// Its run and reproduce read the CONFORM_* environment as stand-ins for
// flags not given and refuse one that conflicts with a flag given (see the
// package doc). Its fences certifies admission fences, opens no store and
// reads no CONFORM_* variable; reproduce sends a fences run's repro there.
// Build one around your own store, then call Main:
//
//	func main() {
//		harness.Command{Openers: map[string]harness.Opener{"mystore": openMyStore}, Default: "mystore:"}.Main()
//	}
type Command struct {
	Openers map[string]Opener
	// Default is the store URL `run` uses without --store.
	Default string
	// Extra subcommands, by name: each gets its arguments and returns an exit code.
	Extra map[string]func(args []string, stdout, stderr io.Writer) int
}

// Main runs the command on os.Args and exits with its code.
// Started by the admission chapter as its own helper (self fences), the
// binary serves the helper protocol instead and exits.
func (c Command) Main() {
	fences.ServeHelperIfRequested()
	exitsAfterCommand.Store(true)
	os.Exit(c.Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the command on args and returns its exit code.
func (c Command) Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		c.usage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "run", "reproduce":
		return c.cmdRun(args[0], args[1:], stdout, stderr)
	case "fences":
		return c.cmdFences("fences", args[1:], stdout, stderr)
	case "list":
		return c.cmdList(args[1:], stdout, stderr)
	case "explore":
		return c.cmdExplore(args[1:], stdout, stderr)
	case "merge":
		return c.cmdMerge(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "conform", Version)
		return 0
	case "help", "-h", "--help":
		c.usage(stdout)
		return 0
	}
	if f, ok := c.Extra[args[0]]; ok {
		return f(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "conform: unknown command %s; run 'conform help' for the commands\n", textsafe.Line(fmt.Sprintf("%q", args[0])))
	return ExitUsage
}

func (c Command) usage(w io.Writer) {
	fmt.Fprintf(w, `usage: conform <command> [flags]

commands:
  run          certify a store with its chapters and write the reports
  fences       certify an implementation of admission fences (conform's own by default)
  reproduce    run again exactly what a failure's repro string names, through run or fences
  list         list the chapters, rows, labels, obligations and failpoints
  explore      a long exploration campaign: the exploration chapter alone, with a live line
  merge        join the reports of a campaign's shards into one set
  version      print conform's version
`)
	for _, k := range sortedKeys(c.Extra) {
		fmt.Fprintf(w, "  %s\n", k)
	}
	fmt.Fprintf(w, "\nstores: %s\nrun 'conform run -h' for run's flags\n", strings.Join(c.schemes(), ", "))
}

func (c Command) schemes() []string {
	var out []string
	for _, k := range sortedKeys(c.Openers) {
		out = append(out, k+":")
	}
	return out
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// prepare makes a run ready once its flags are checked: the report
// directory can take the reports, the store opens and answers the
// preflight, and the seed is drawn when none was given. It returns why
// not in one line.
func (c Command) prepare(f *settings.Flags, callTimeout time.Duration) (NewRealm, error) {
	if err := checkReportDir(f.ReportDir); err != nil {
		return nil, fmt.Errorf("--report-dir %q: %v", f.ReportDir, err)
	}
	newRealm, err := c.open(f.Store)
	if err != nil {
		return nil, err
	}
	if err := preflight(newRealm, max(PreflightBound, callTimeout)); err != nil {
		return nil, fmt.Errorf("store %q cannot be opened: %v", f.Store, err)
	}
	if f.Seed == 0 {
		if f.Seed, err = settings.DrawSeed(); err != nil {
			return nil, err
		}
	}
	return newRealm, nil
}

// refuse prints one line to w, "conform NAME: " and the message with any
// outside text in it escaped, and returns ExitUsage.
func refuse(w io.Writer, name, format string, args ...any) int {
	fmt.Fprintf(w, "conform %s: %s\n", name, textsafe.Line(fmt.Sprintf(format, args...)))
	return ExitUsage
}

// parseInterleaved parses args with fs, taking flags before and after the
// positional arguments alike, and returns the positional ones in order;
// after "--" every argument is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// cmdRun is `conform run`, and `conform reproduce` when name is
// "reproduce": then exactly one argument is the repro string, which fixes
// the seed, the rows, the failpoints and the store.
func (c Command) cmdRun(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f settings.Flags
	fs.StringVar(&f.Store, "store", c.Default, "the store's URL ("+strings.Join(c.schemes(), ", ")+")")
	fs.StringVar(&f.Rows, "rows", "", "comma-separated row IDs to run (see 'conform list')")
	fs.StringVar(&f.Labels, "label-filter", "", "a Ginkgo label filter, e.g. 'ob:5 || row:kill' (or $"+EnvLabels+")")
	fs.Uint64Var(&f.Seed, "seed", 0, "the seed of every random choice (0: draw one; or $"+EnvSeed+")")
	fs.StringVar(&f.ReportDir, "report-dir", "conform-report", "where the four reports go (or $"+EnvReportDir+")")
	timeout := fs.Duration("timeout", 60*time.Second, "the bound of the harness's own time in each spec of a row (time with no store call in flight; at least "+MinRowTimeout.String()+")")
	callTimeout := fs.Duration("call-timeout", 0, "how long one store call may take before it is a hang (0: 10 × the store's p99 latency so far, within 2s..30s; at least 100ms)")
	fs.Var((*multi)(&f.Failpoints), "failpoint", "arm a failpoint for the run: name=terms (repeatable; see 'conform list'); a crash it injects fails the row whose commit it hits")
	fencesFlag := fs.String("fences", "", movedToFences)
	fs.String("fences-dir", "", movedToFences)
	keepRealms := fs.Bool("keep-realms", false, "keep every chapter's realm (its database rows or files) after the run")
	withoutInStore := fs.Bool("without-instore-faults", false, "declare that the store calls no in-store site: the run can then be conformant without in-store faults")
	shardFlag := fs.String("shard", "", "run shard i of N (i counts from 0, as $JOB_COMPLETION_INDEX): the rows whose ID hashes to i, and the exploration's histories whose index modulo N is i; needs a seed; 'conform merge' joins the shards' reports")
	fs.IntVar(&f.Explore, "explore-histories", DefaultExploreHistories, fmt.Sprintf("the exploration chapter's budget (chapter:explore): N randomized histories of at most %d operations each; 0 leaves the chapter out (or $%s)", explore.MaxOps, EnvExplore))
	parallel := parallelFlag(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.runUsage(stdout, name, fs)
			return 0
		}
		return refuse(stderr, name, "%v (see 'conform %s -h')", err, name)
	}
	if name == "reproduce" && len(pos) == 1 {
		if r, err := ParseRepro(pos[0]); err == nil && fenceRepro(r) {
			return c.cmdFences(name, args, stdout, stderr)
		}
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, fl := range []string{"fences", "fences-dir"} {
		if given[fl] {
			return refuse(stderr, name, "--%s: conform %s certifies the store alone; certify fences with: conform fences --fences '%s'", fl, name, fencesValue(*fencesFlag))
		}
	}
	var repro *Repro
	switch {
	case name == "reproduce" && len(pos) == 0:
		return refuse(stderr, name, "give the repro string a failure ended with, e.g. conform reproduce 'v1;seed=42;row=kill'")
	case name == "reproduce" && len(pos) > 1:
		return refuse(stderr, name, "takes one repro string, got %d arguments: %q", len(pos), pos)
	case name == "reproduce":
		r, err := ParseRepro(pos[0])
		if err != nil {
			return refuse(stderr, name, "%v", err)
		}
		repro = &r
	case len(pos) > 0:
		return refuse(stderr, name, "unexpected argument %q", pos[0])
	}
	if err := checkParallel(*parallel); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if f.Explore < 0 {
		return refuse(stderr, name, "--explore-histories %d: give a number of histories, or 0 to leave the chapter out", f.Explore)
	}
	if *timeout < MinRowTimeout {
		return refuse(stderr, name, "--timeout %s is below the floor of %s: a bound that short fails a correct store instead of judging it", *timeout, MinRowTimeout)
	}
	if err := checkBounds(*timeout, *callTimeout); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	e, err := settings.ReadEnv(os.Getenv)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if r := e.Repro; r != nil && fenceRepro(*r) {
		return refuse(stderr, name, "%s names a run of the fences (%s), not of a store; run it with: conform reproduce '%s'", EnvRepro, r.FencesName(), r.String())
	}
	f.Given = given
	set, err := settings.Build(settings.Input{Flags: &f, Repro: repro, Env: e})
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if r := repro; r != nil || e.Repro != nil {
		if r == nil {
			r = e.Repro
		}
		if r.Store != "" && !c.opens(r.Store) {
			return refuse(stderr, name, "the repro names the store %q, which this command does not open (it opens %s); a store tested under go test by its author runs the repro there: CONFORM_REPRO='%s' go test ./...",
				r.Store, strings.Join(c.schemes(), ", "), r.String())
		}
	}
	filter, err := rowFilter(f.Rows, f.Labels)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	for _, fp := range f.Failpoints {
		if _, _, err := faults.ParseFailpointFlag(fp); err != nil {
			return refuse(stderr, name, "%v", err)
		}
	}
	if err := checkSelection(filter, activeChapters(set.Options)); err != nil {
		switch {
		case !exploreOn(f) && selectsExplore(filter):
			err = fmt.Errorf("%v; --explore-histories 0 left the exploration chapter out", err)
		case selectsFences(filter):
			err = fmt.Errorf("%v; it selects rows of the fences, which 'conform fences' certifies", err)
		}
		return refuse(stderr, name, "%v", err)
	}
	if name == "reproduce" && *shardFlag != "" {
		return refuse(stderr, name, "--shard %q: reproduce runs what one repro names, whole; shards are for run and explore", *shardFlag)
	}
	sh, filter, err := runShard(*shardFlag, filter, f)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	newRealm, err := c.prepare(&f, *callTimeout)
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	opts := []Option{WithRowTimeout(*timeout), WithCallTimeout(*callTimeout), WithLabelFilter(filter), WithFailpoints(f.Failpoints...)}
	if *withoutInStore {
		opts = append(opts, WithoutInStoreFaults())
	}
	if *keepRealms {
		opts = append(opts, WithKeepRealms())
	}
	opts = append(opts, func(o *Options) { o.Explore = set.Explore })
	opts = append(opts, WithExploreParallel(*parallel))
	if f.Hist != nil {
		opts = append(opts, withExploreHist(*f.Hist))
	}
	if f.History != "" {
		opts = append(opts, func(o *Options) { o.ExploreHistory = f.History })
	}
	note := ""
	if sh.Count > 0 {
		opts = append(opts, WithShard(sh.Index, sh.Count))
		note += ", shard " + sh.String()
	}
	if *parallel > 1 && exploreOn(f) {
		note += fmt.Sprintf(", exploration histories %d at once", *parallel)
	}
	if len(set.From.Env) > 0 {
		note += "; from the environment: " + strings.Join(set.From.Env, ", ")
	}
	return c.certify(name, newRealm, f, note, opts, nil, stdout, stderr)
}

// exploreOn reports whether the flags turn the exploration chapter on.
func exploreOn(f settings.Flags) bool { return f.Explore > 0 || f.Hist != nil || f.History != "" }

// selectsExplore reports whether label filter f would select the
// exploration chapter's row were the chapter on.
func selectsExplore(f string) bool {
	sel, err := selection(f, []chapter.Chapter{explore.Chapter()})
	return err == nil && len(sel) > 0
}

// withExploreHist plays history i of the exploration chapter alone.
func withExploreHist(i int) Option { return func(o *Options) { o.ExploreHist = &i } }

// certify runs the chapters opts select over newRealm, with the store,
// seed and report directory of f, the live lines on stdout, and writes
// the reports; it returns the command's exit code. From its start a
// signal or a closed stdout no longer ends the process: both are noted,
// the reports are written, and the exit code says what happened. live,
// when not nil, is called with the command's stdout before the run
// starts and returns a function called after the run.
func (c Command) certify(name string, newRealm NewRealm, f settings.Flags, note string, opts []Option, live func(out io.Writer) func(), stdout, stderr io.Writer) int {
	defer beforeExit()
	sig := watchSignals()
	defer sig.stop()
	out := &pipeSafe{w: stdout}
	verb := "certifying"
	if name == "explore" {
		verb = "exploring"
	}
	fmt.Fprintf(out, "conform %s: %s %s (seed %d%s)\n", Version, verb, textsafe.Line(f.Store), f.Seed, note)
	opts = append(opts, WithStore(f.Store), WithReportDir(f.ReportDir), WithProgress(out), WithSeed(f.Seed))
	var stop func()
	if live != nil {
		stop = live(out)
	}
	run, err := RunBinary(newRealm, opts...)
	if stop != nil {
		stop()
	}
	signalled := sig.count() > 0
	switch {
	case run == nil && signalled:
		fmt.Fprintln(out, "\nINTERRUPTED, NO VERDICT: the run stopped before its reports; none were written")
		fmt.Fprintf(stderr, "conform %s: interrupted before the reports were written; none were written\n", name)
		return ExitNotConformant
	case err != nil && run != nil && run.Interrupted:
		fmt.Fprintln(out, "INTERRUPTED, and the reports were NOT written")
		refuse(stderr, name, "interrupted, and the reports were not written: %v", err)
		return ExitNotConformant
	case err != nil:
		// The summary, if any, is out; a run whose reports could not be
		// written has no verdict a CI job can keep.
		return refuse(stderr, name, "%v", err)
	case run.Interrupted:
		fmt.Fprintf(stderr, "conform %s: interrupted; unfinished rows are marked not run in the reports\n", name)
		return ExitNotConformant
	case signalled:
		// Every row had ended: the run is complete, its reports say so,
		// and the exit code is its verdict's (docs/command.md).
		fmt.Fprintf(stderr, "conform %s: a signal came after the last row had ended; the run was complete, and its verdict stands\n", name)
	}
	if len(f.Failpoints) > 0 && run.Counts()[reports.StatusFailed] > 0 {
		fmt.Fprintf(out, "note: %s\n", textsafe.Line(userFailpointNote("every failure of this run", f.Failpoints)))
	}
	switch v := run.Verdict(); {
	case v.Passing():
		return ExitConformant
	case v == reports.VerdictEmpty:
		return ExitUsage
	}
	return ExitNotConformant
}

// runUsage prints the help of `conform run` or `conform reproduce`.
func (c Command) runUsage(w io.Writer, name string, fs *flag.FlagSet) {
	if name == "reproduce" {
		fmt.Fprintf(w, "usage: conform reproduce [flags] 'REPRO'\n\nruns again exactly what a failure's repro string names; a flag that says otherwise than the string is refused\n\n")
	} else {
		fmt.Fprintf(w, "usage: conform run [flags]\n\n")
	}
	printFlags(w, fs)
}

// movedToFences is the usage of a flag `conform run` refuses: it belongs
// to `conform fences`. printFlags leaves such flags out.
const movedToFences = "moved to 'conform fences'"

// printFlags prints the flags of fs as PrintDefaults does, but for those
// whose usage is movedToFences.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(fl *flag.Flag) {
		if fl.Usage != movedToFences {
			shown.Var(fl.Value, fl.Name, fl.Usage)
			shown.Lookup(fl.Name).DefValue = fl.DefValue
		}
	})
	shown.SetOutput(w)
	shown.PrintDefaults()
}

// rowFilter joins --rows and --label-filter into one label filter over
// the chapters of a run with opts, refusing unknown rows and malformed
// filters.
func rowFilter(rows, labels string, opts ...Option) (string, error) {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	known := map[reports.RowID]bool{}
	for _, ch := range chaptersOf(o) {
		for _, r := range ch.Rows() {
			known[r.ID] = true
		}
	}
	var parts []string
	for _, r := range strings.Split(rows, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !known[reports.RowID(r)] {
			if cmd := commandOf(r); cmd != "" {
				return "", fmt.Errorf("--rows: row %q is not this command's: 'conform %s' runs it (see 'conform list')", r, cmd)
			}
			return "", fmt.Errorf("--rows: unknown row %q (see 'conform list')", r)
		}
		parts = append(parts, "row:"+r)
	}
	if rows != "" && len(parts) == 0 {
		return "", fmt.Errorf("--rows %q names no row (see 'conform list')", rows)
	}
	filter := strings.Join(parts, " || ")
	if labels != "" {
		if err := ValidateLabelFilter(labels, opts...); err != nil {
			return "", err
		}
		filter = joinFilters(filter, labels)
	}
	if filter != "" {
		if err := ValidateLabelFilter(filter, opts...); err != nil {
			return "", err
		}
	}
	return filter, nil
}

// checkReportDir makes sure the reports can be written before any row
// runs, without creating anything: a run refused later leaves no trace.
func checkReportDir(dir string) error {
	switch dir {
	case "-":
		return nil // no reports
	case "":
		return errors.New("name a directory for the reports, or - for none")
	}
	return reportdir.CheckDir(dir)
}

// opens reports whether the command has an opener for url's scheme.
func (c Command) opens(url string) bool {
	scheme, _, ok := strings.Cut(url, ":")
	_, known := c.Openers[scheme]
	return ok && known
}

func (c Command) open(url string) (NewRealm, error) {
	scheme, _, ok := strings.Cut(url, ":")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("store URL %q has no scheme; known: %s", url, strings.Join(c.schemes(), ", "))
	}
	op, ok := c.Openers[scheme]
	if !ok {
		return nil, fmt.Errorf("unknown store %q; known: %s", scheme+":", strings.Join(c.schemes(), ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nr, err := op(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("store %q: %v", url, err)
	}
	return nr, nil
}

// PreflightBound bounds the command's preflight: making a realm, opening
// a handle and one ListHeads on it, in all. A larger --call-timeout raises
// it to that.
const PreflightBound = 8 * time.Second

// preflight makes one realm, opens one handle on it and lists one page of
// it, within bound in all, so that a store that cannot be reached, or
// accepts connections but never answers, is a usage error, not rows that
// fail or hang. A store that ignores its context is left behind.
func preflight(nr NewRealm, bound time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	step := "making a realm"
	var mu sync.Mutex
	at := func(s string) {
		mu.Lock()
		step = s
		mu.Unlock()
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("it panicked: %v", r)
			}
		}()
		done <- preflightSteps(ctx, nr, at)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return fmt.Errorf("it did not answer within %s (%s)", bound, step)
	}
}

// preflightSteps makes a realm, opens a handle, lists one page and closes
// what it opened; at names each step as it begins.
func preflightSteps(ctx context.Context, nr NewRealm, at func(step string)) error {
	f, err := nr(ctx)
	if err != nil {
		return err
	}
	if c, ok := f.(io.Closer); ok {
		defer c.Close()
	}
	at("Open")
	st, err := f.Open(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("Open returned a nil store and no error")
	}
	defer func() {
		if c, ok := st.(io.Closer); ok {
			_ = c.Close()
		} else if k, ok := st.(hoststore.Killer); ok {
			k.Kill()
		}
	}()
	at("ListHeads")
	_, err = st.ListHeads(ctx, hoststore.KindRecord, nil, 1)
	return err
}

func (c Command) cmdList(args []string, stdout, stderr io.Writer) int {
	verbose := len(args) == 1 && (args[0] == "-v" || args[0] == "--verbose")
	if len(args) > 0 && !verbose {
		fmt.Fprintf(stderr, "conform list: takes no arguments but -v, got %q\n", args[0])
		return ExitUsage
	}
	for _, cert := range certifiers() {
		for _, ch := range cert.chapters() {
			c.listChapter(stdout, cert.command, ch, verbose)
		}
	}
	fmt.Fprintln(stdout, "obligations (label = ID):")
	tw := tabwriter.NewWriter(stdout, 0, 0, 1, ' ', 0)
	for _, o := range catalogue(allChapters()) {
		fmt.Fprintf(tw, "  %s\t%s\n", o.ID, o.Title)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nfailpoints (--failpoint name=terms):")
	for _, e := range faults.Catalogue() {
		fmt.Fprintf(stdout, "  %-26s [%s] %s\n  %-26s effects: %s\n", e.Name, e.Layer, e.Doc, "", e.Effects)
	}
	fmt.Fprintf(stdout, "\nstores: %s\n", strings.Join(c.schemes(), ", "))
	return 0
}

// listChapter prints chapter ch of command cmd and its rows, as `conform
// list` shows them.
func (c Command) listChapter(stdout io.Writer, cmd string, ch chapter.Chapter, verbose bool) {
	fmt.Fprintf(stdout, "%s (label chapter:%s; certified by 'conform %s'), rows in order:\n", ch.Title, ch.ID, cmd)
	if ch.ID == explore.ID {
		fmt.Fprintf(stdout, "  (%d histories of at most %d operations by default; --explore-histories N sets another budget, 0 leaves it out; 'conform explore' runs long campaigns)\n", DefaultExploreHistories, explore.MaxOps)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, r := range ch.Rows() {
		if verbose {
			fmt.Fprintf(stdout, "  row:%s  %s  [%s]\n      depends on: %s\n", r.ID, r.Name, obligationList(r.Obligations), r.DependsOnText())
			continue
		}
		fmt.Fprintf(tw, "  row:%s\t%s\t%s\n", r.ID, r.Name, obligationList(r.Obligations))
	}
	tw.Flush()
	fmt.Fprintln(stdout)
}

// obligationList returns ids joined by spaces.
func obligationList(ids []reports.ObligationID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

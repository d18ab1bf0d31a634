package engine

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/conform-spi/conform/internal/settings"
)

// FencesReportDir is where `conform fences` writes its reports unless
// --report-dir says otherwise: apart from a store's ./conform-report.
const FencesReportDir = "conform-fences-report"

// cmdFences is `conform fences`, and `conform reproduce` of a fences
// run's repro string when name is "reproduce". It certifies an
// implementation of admission fences over the fences' chapters, with a
// verdict, reports and an exit code of its own; it opens no store and
// reads no CONFORM_* variable (those are a store run's).
func (c Command) cmdFences(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f settings.Flags
	fs.StringVar(&f.Fences, "fences", "self", "the fences to certify: self (conform's own) or exec:PROGRAM ARGS (a helper of another implementation; see docs/admission-helper-protocol.md)")
	fencesDir := fs.String("fences-dir", "", "where the rows make their directories; it must host fences (default: the system's temporary directory; see 'conform hosts-fences')")
	fs.StringVar(&f.Rows, "rows", "", "comma-separated row IDs to run (see 'conform list')")
	fs.StringVar(&f.Labels, "label-filter", "", "a label filter, e.g. 'adm:exclusion || row:adm-try'")
	fs.Uint64Var(&f.Seed, "seed", 0, "the seed of the run (0: draw one)")
	fs.StringVar(&f.ReportDir, "report-dir", FencesReportDir, "where the four reports go")
	timeout := fs.Duration("timeout", 60*time.Second, "the bound of each row (at least "+MinRowTimeout.String()+")")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fencesUsage(stdout, name, fs)
			return 0
		}
		return refuse(stderr, name, "%v (see 'conform %s -h')", err, name)
	}
	var repro *Repro
	switch {
	case name == "reproduce" && len(pos) != 1:
		return refuse(stderr, name, "takes one repro string, got %d arguments", len(pos))
	case name == "reproduce":
		r, err := ParseRepro(pos[0])
		if err != nil {
			return refuse(stderr, name, "%v", err)
		}
		if err := checkFencesRepro(r); err != nil {
			return refuse(stderr, name, "%v", err)
		}
		repro = &r
	case len(pos) > 0:
		return refuse(stderr, name, "unexpected argument %q", pos[0])
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	f.Given = given
	if _, err := settings.Build(settings.Input{Flags: &f, Repro: repro}); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if _, err := settings.FencesCommand(f.Fences); err != nil {
		return refuse(stderr, name, "--%v", err)
	}
	if *timeout < MinRowTimeout {
		return refuse(stderr, name, "--timeout %s is below the floor of %s: a bound that short fails correct fences instead of judging them", *timeout, MinRowTimeout)
	}
	filter, err := rowFilter(f.Rows, f.Labels, asFencesRun())
	if err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if err := checkSelection(filter, activeChapters(Options{Fences: f.Fences, RunsFences: true})); err != nil {
		return refuse(stderr, name, "%v", err)
	}
	if err := checkReportDir(f.ReportDir); err != nil {
		return refuse(stderr, name, "--report-dir %q: %v", f.ReportDir, err)
	}
	if f.Seed == 0 {
		if f.Seed, err = settings.DrawSeed(); err != nil {
			return refuse(stderr, name, "%v", err)
		}
	}
	f.Store = "fences:" + f.Fences
	opts := []Option{asFencesRun(), WithRowTimeout(*timeout), WithLabelFilter(filter), withFences(f.Fences, *fencesDir)}
	return c.certify(name, nil, f, "", opts, nil, stdout, stderr)
}

// withFences makes a fences run certify fences, making its directories
// in dir (see Options.Fences).
func withFences(fences, dir string) Option {
	return func(o *Options) { o.Fences, o.FencesDir = fences, dir }
}

// checkFencesRepro refuses in a fences run's repro what a fences run has
// none of: failpoints and exploration histories.
func checkFencesRepro(r Repro) error {
	switch {
	case len(r.Failpoints) > 0:
		return fmt.Errorf("repro %q: a run of the fences arms no failpoint", r.String())
	case r.Hist != nil || r.History != "":
		return fmt.Errorf("repro %q: a run of the fences plays no exploration history", r.String())
	}
	return nil
}

// fencesUsage prints the help of `conform fences`.
func fencesUsage(w io.Writer, name string, fs *flag.FlagSet) {
	if name == "reproduce" {
		fmt.Fprintf(w, "usage: conform reproduce [flags] 'REPRO'\n\nruns again exactly what a fences run's repro string names\n\n")
	} else {
		fmt.Fprintf(w, "usage: conform fences [flags]\n\ncertifies an implementation of realm admission fences: conform's own, or a helper's (see docs/admission-helper-protocol.md)\n\n")
	}
	printFlags(w, fs)
}

// fencesValue returns what --fences names, "self" when it names nothing.
func fencesValue(s string) string {
	if s == "" {
		return "self"
	}
	return s
}

// selectsFences reports whether label filter f selects a row of the
// fences' chapters.
func selectsFences(f string) bool {
	sel, err := selection(f, fenceChapters())
	return err == nil && len(sel) > 0
}

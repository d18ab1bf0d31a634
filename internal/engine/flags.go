package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// runFlags are the flags of `conform run` (and `conform reproduce`) that a
// repro or a CONFORM_* variable can also set.
type runFlags struct {
	store, rows, labels, reportDir string
	seed                           uint64
	failpoints                     multi
	fences                         string // conform fences' --fences
	explore                        int    // --explore-histories
	hist                           *int   // a repro's hist=N
	history                        string // a repro's history=h1…
}

// merge applies a repro and the CONFORM_* environment to the flags, given
// the names of the flags the user gave. Flags are the command's interface:
// a setting from the environment fills a flag that was not given and is
// refused when it conflicts with one that was; a repro (the string given
// to reproduce, or CONFORM_REPRO) sets the seed, the rows, the failpoints
// and the store it names, refused when a flag given says otherwise: a
// report always names the store that was run, never the one a repro came
// from. A refusal is one line naming both sides. merge returns the
// variables that set something, for the run's header.
func (f *runFlags) merge(given map[string]bool, repro *Repro, e env) ([]string, error) {
	var fromEnv []string
	reproName := "the repro string"
	if e.repro != nil {
		if repro != nil && repro.String() != e.repro.String() {
			return nil, fmt.Errorf("the repro string %q conflicts with %s=%q", repro.String(), EnvRepro, e.repro.String())
		}
		if repro == nil {
			reproName = EnvRepro
			fromEnv = append(fromEnv, EnvRepro)
		}
		repro = e.repro
	}
	seedBy := ""
	if given["seed"] {
		seedBy = "--seed " + strconv.FormatUint(f.seed, 10)
	}
	if repro != nil {
		by := fmt.Sprintf("%s (seed=%d)", reproName, repro.Seed)
		if given["seed"] && f.seed != repro.Seed {
			return nil, fmt.Errorf("%s conflicts with %s", seedBy, by)
		}
		if given["rows"] && f.rows != repro.Row {
			return nil, fmt.Errorf("--rows %q conflicts with %s (row=%s)", f.rows, reproName, repro.Row)
		}
		if given["failpoint"] && !slices.Equal(f.failpoints, repro.Failpoints) {
			return nil, fmt.Errorf("--failpoint %s conflicts with %s (failpoints %s)", strings.Join(f.failpoints, " --failpoint "), reproName, strings.Join(repro.Failpoints, " "))
		}
		f.seed, f.rows = repro.Seed, repro.Row
		f.hist, f.history = repro.Hist, repro.History
		f.failpoints = append(multi(nil), repro.Failpoints...)
		if repro.Store != "" {
			if given["store"] && f.store != repro.Store {
				return nil, fmt.Errorf("--store %q conflicts with %s (store=%s); a repro names the store it failed on, so drop store= from it to run it elsewhere", f.store, reproName, repro.Store)
			}
			f.store = repro.Store
		}
		if repro.Fences != "" {
			if given["fences"] && f.fences != repro.Fences {
				return nil, fmt.Errorf("--fences %q conflicts with %s (fences=%s)", f.fences, reproName, repro.Fences)
			}
			f.fences = repro.Fences
		}
		seedBy = by
	}
	if e.seed != 0 {
		switch {
		case seedBy == "":
			f.seed = e.seed
			fromEnv = append(fromEnv, EnvSeed)
		case f.seed != e.seed:
			return nil, fmt.Errorf("%s=%d conflicts with %s", EnvSeed, e.seed, seedBy)
		}
	}
	if e.reportDir != "" {
		switch {
		case !given["report-dir"]:
			f.reportDir = e.reportDir
			fromEnv = append(fromEnv, EnvReportDir)
		case filepath.Clean(f.reportDir) != filepath.Clean(e.reportDir):
			return nil, fmt.Errorf("%s=%q conflicts with --report-dir %q", EnvReportDir, e.reportDir, f.reportDir)
		}
	}
	if e.explore >= 0 {
		switch {
		case !given["explore-histories"]:
			f.explore = e.explore
			fromEnv = append(fromEnv, EnvExplore)
		case f.explore != e.explore:
			return nil, fmt.Errorf("%s=%d conflicts with --explore-histories %d", EnvExplore, e.explore, f.explore)
		}
	}
	if e.labels != "" {
		switch {
		case !given["label-filter"]:
			f.labels = e.labels
			fromEnv = append(fromEnv, EnvLabels)
		case f.labels != e.labels:
			return nil, fmt.Errorf("%s=%q conflicts with --label-filter %q", EnvLabels, e.labels, f.labels)
		}
	}
	return fromEnv, nil
}

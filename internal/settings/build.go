package settings

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/conform-spi/conform/hoststore"
)

// The CONFORM_* environment variables. Under go test they are the user's
// run-time override and rank above code options; the command maps them
// onto its flags and refuses one that conflicts with a flag given.
const (
	// EnvRepro is a repro string (ParseRepro): its seed, its row (as the
	// label filter "row:ID") and its failpoints replace the run's.
	EnvRepro = "CONFORM_REPRO"
	// EnvSeed is the seed, in decimal; 0 draws one.
	EnvSeed = "CONFORM_SEED"
	// EnvReportDir is where the reports go.
	EnvReportDir = "CONFORM_REPORT_DIR"
	// EnvLabels is the label filter.
	EnvLabels = "CONFORM_LABEL_FILTER"
	// EnvExplore sets the exploration chapter's budget in histories, in
	// decimal; 0 leaves the chapter out.
	EnvExplore = "CONFORM_EXPLORE_HISTORIES"
)

// Env is the CONFORM_* environment of a run, read and checked. Its zero
// value is an environment that sets nothing.
type Env struct {
	Seed      uint64 // 0: not set, or set to 0 (draw one)
	ReportDir string
	Labels    string
	Repro     *Repro
	Explore   *int // nil: not set; 0: the chapter left out
}

// ReadEnv reads the CONFORM_* variables through getenv. It refuses a
// malformed value, and CONFORM_SEED or CONFORM_LABEL_FILTER set beside
// CONFORM_REPRO to something else than the repro says, naming both.
func ReadEnv(getenv func(string) string) (Env, error) {
	var e Env
	if s := getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Env{}, fmt.Errorf("%s=%q is not a number", EnvSeed, s)
		}
		e.Seed = n
	}
	if s := getenv(EnvExplore); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return Env{}, fmt.Errorf("%s=%q is not a number of histories", EnvExplore, s)
		}
		e.Explore = &n
	}
	e.ReportDir = getenv(EnvReportDir)
	e.Labels = getenv(EnvLabels)
	if s := getenv(EnvRepro); s != "" {
		r, err := ParseRepro(s)
		if err != nil {
			return Env{}, fmt.Errorf("%s: %v", EnvRepro, err)
		}
		if e.Seed != 0 && e.Seed != r.Seed {
			return Env{}, fmt.Errorf("%s=%d conflicts with %s (seed=%d)", EnvSeed, e.Seed, EnvRepro, r.Seed)
		}
		if r.Row != "" && e.Labels != "" && e.Labels != "row:"+r.Row {
			return Env{}, fmt.Errorf("%s=%q conflicts with %s (row=%s)", EnvLabels, e.Labels, EnvRepro, r.Row)
		}
		e.Repro = &r
	}
	return e, nil
}

// Flags are the command's flags that a repro or a CONFORM_* variable can
// also set, as parsed.
type Flags struct {
	Store, Rows, Labels, ReportDir string
	Seed                           uint64
	Failpoints                     []string
	Fences                         string // conform fences' --fences
	Explore                        int    // --explore-histories; 0 leaves the chapter out
	Hist                           *int   // a repro's hist=N
	History                        string // a repro's history=h1…
	// Given names the flags the user gave, without their dashes.
	Given map[string]bool
}

// Input is what Build ranks: the code's options, the command's flags, a
// repro string and the environment.
type Input struct {
	// Code are the options of the code, applied in order.
	Code []Option
	// Flags, when not nil, are the command's: they are its interface, and
	// Build settles them in place.
	Flags *Flags
	// Repro is the repro string given to `conform reproduce`, or nil.
	Repro *Repro
	// Env is the CONFORM_* environment (ReadEnv); zero: none.
	Env Env
}

// Build returns the settings of one run. Without flags (a run under go
// test) it takes the defaults, then the code's options in order, then each
// CONFORM_* variable set in place of what the code said (CONFORM_REPRO
// last: it names the run exactly, but for the store the test opens), then
// draws the seed and fills the report directory when nothing set them.
// With flags (the command), a variable fills a flag not given and one that
// conflicts with a flag given is refused; a repro (in.Repro or
// CONFORM_REPRO) sets the seed, the rows, the failpoints, the store and
// the fences it names, refused where a flag given says otherwise; the
// flags are settled in place and the seed is left to the command. A
// refusal is one line naming both sides.
func Build(in Input) (Settings, error) {
	var s Settings
	for _, f := range in.Code {
		f(&s.Options)
	}
	if in.Flags != nil {
		return s, s.merge(in.Flags, in.Repro, in.Env)
	}
	s.rank(in.Env)
	if s.Seed == 0 {
		seed, err := DrawSeed()
		if err != nil {
			return s, err
		}
		s.Seed, s.From.Seed = seed, FromDrawn
	}
	if s.ReportDir == "" {
		s.ReportDir, s.From.ReportDir = DefaultReportDir, FromDefault
	}
	if s.Explore == 0 {
		s.Explore = DefaultExploreHistories
	}
	return s, nil
}

// rank applies e over the code's options, as a run under go test does.
func (s *Settings) rank(e Env) {
	s.From = Sources{Seed: FromDefault, Labels: FromDefault, Failpoints: FromDefault, ReportDir: FromDefault}
	if s.Seed != 0 {
		s.From.Seed = FromCode
	}
	if s.LabelFilter != "" {
		s.From.Labels = FromCode
	}
	if len(s.Failpoints) > 0 {
		s.From.Failpoints = FromCode
	}
	if s.ReportDir != "" {
		s.From.ReportDir = FromCode
	}
	if e.Seed != 0 {
		s.Seed, s.From.Seed = e.Seed, EnvSeed
	}
	if e.Labels != "" {
		s.LabelFilter, s.From.Labels = e.Labels, EnvLabels
	}
	if e.ReportDir != "" {
		s.ReportDir, s.From.ReportDir = e.ReportDir, EnvReportDir
	}
	if e.Explore != nil {
		s.Explore = ExploreOption(*e.Explore)
	}
	if r := e.Repro; r != nil {
		s.Seed, s.From.Seed = r.Seed, EnvRepro
		if r.Row != "" {
			s.LabelFilter, s.From.Labels = "row:"+r.Row, EnvRepro
		}
		s.Failpoints, s.From.Failpoints = append([]string(nil), r.Failpoints...), EnvRepro
		if r.Hist != nil {
			s.ExploreHist = hoststore.Ptr(*r.Hist)
		}
		s.ExploreHistory = r.History
	}
}

// ExploreOption returns Options.Explore for a number of histories n given
// by a flag or a variable: 0 leaves the chapter out.
func ExploreOption(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// merge applies a repro and the environment to the flags f, as the
// command does, and makes the settings those of the flags.
func (s *Settings) merge(f *Flags, repro *Repro, e Env) error {
	given := f.Given
	s.From = Sources{Seed: FromDefault, Labels: FromDefault, Failpoints: FromDefault, ReportDir: FromDefault}
	for flag, from := range map[string]*string{"seed": &s.From.Seed, "label-filter": &s.From.Labels, "failpoint": &s.From.Failpoints, "report-dir": &s.From.ReportDir} {
		if given[flag] {
			*from = "--" + flag
		}
	}
	reproName := "the repro string"
	if e.Repro != nil {
		if repro != nil && repro.String() != e.Repro.String() {
			return fmt.Errorf("the repro string %q conflicts with %s=%q", repro.String(), EnvRepro, e.Repro.String())
		}
		if repro == nil {
			reproName = EnvRepro
			s.From.Env = append(s.From.Env, EnvRepro)
		}
		repro = e.Repro
	}
	seedBy := ""
	if given["seed"] {
		seedBy = "--seed " + strconv.FormatUint(f.Seed, 10)
	}
	if repro != nil {
		by := fmt.Sprintf("%s (seed=%d)", reproName, repro.Seed)
		if given["seed"] && f.Seed != repro.Seed {
			return fmt.Errorf("%s conflicts with %s", seedBy, by)
		}
		if given["rows"] && f.Rows != repro.Row {
			return fmt.Errorf("--rows %q conflicts with %s (row=%s)", f.Rows, reproName, repro.Row)
		}
		if given["failpoint"] && !slices.Equal(f.Failpoints, repro.Failpoints) {
			return fmt.Errorf("--failpoint %s conflicts with %s (failpoints %s)", strings.Join(f.Failpoints, " --failpoint "), reproName, strings.Join(repro.Failpoints, " "))
		}
		f.Seed, f.Rows = repro.Seed, repro.Row
		f.Hist, f.History = repro.Hist, repro.History
		f.Failpoints = append([]string(nil), repro.Failpoints...)
		s.From.Seed, s.From.Failpoints = reproName, reproName
		if repro.Store != "" {
			if given["store"] && f.Store != repro.Store {
				return fmt.Errorf("--store %q conflicts with %s (store=%s); a repro names the store it failed on, so drop store= from it to run it elsewhere", f.Store, reproName, repro.Store)
			}
			f.Store = repro.Store
		}
		if repro.Fences != "" {
			if given["fences"] && f.Fences != repro.Fences {
				return fmt.Errorf("--fences %q conflicts with %s (fences=%s)", f.Fences, reproName, repro.Fences)
			}
			f.Fences = repro.Fences
		}
		seedBy = by
	}
	if e.Seed != 0 {
		switch {
		case seedBy == "":
			f.Seed = e.Seed
			s.From.Seed = EnvSeed
			s.From.Env = append(s.From.Env, EnvSeed)
		case f.Seed != e.Seed:
			return fmt.Errorf("%s=%d conflicts with %s", EnvSeed, e.Seed, seedBy)
		}
	}
	if e.ReportDir != "" {
		switch {
		case !given["report-dir"]:
			f.ReportDir = e.ReportDir
			s.From.ReportDir = EnvReportDir
			s.From.Env = append(s.From.Env, EnvReportDir)
		case filepath.Clean(f.ReportDir) != filepath.Clean(e.ReportDir):
			return fmt.Errorf("%s=%q conflicts with --report-dir %q", EnvReportDir, e.ReportDir, f.ReportDir)
		}
	}
	if e.Explore != nil {
		switch {
		case !given["explore-histories"]:
			f.Explore = *e.Explore
			s.From.Env = append(s.From.Env, EnvExplore)
		case f.Explore != *e.Explore:
			return fmt.Errorf("%s=%d conflicts with --explore-histories %d", EnvExplore, *e.Explore, f.Explore)
		}
	}
	if e.Labels != "" {
		switch {
		case !given["label-filter"]:
			f.Labels = e.Labels
			s.From.Labels = EnvLabels
			s.From.Env = append(s.From.Env, EnvLabels)
		case f.Labels != e.Labels:
			return fmt.Errorf("%s=%q conflicts with --label-filter %q", EnvLabels, e.Labels, f.Labels)
		}
	}
	s.Seed, s.Store, s.ReportDir, s.LabelFilter = f.Seed, f.Store, f.ReportDir, f.Labels
	s.Failpoints, s.Fences = f.Failpoints, f.Fences
	s.Explore, s.ExploreHist, s.ExploreHistory = ExploreOption(f.Explore), f.Hist, f.History
	return nil
}

// DrawSeed draws a non-zero seed at random.
func DrawSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("drawing a seed: %v", err)
	}
	return binary.LittleEndian.Uint64(b[:])>>1 | 1, nil
}

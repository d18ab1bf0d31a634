package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/settings"
)

// envOf is a getenv over a fixed map.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const reproKill = "v1;seed=42;row=kill;fp=commit-locked%3Dreturn%28%22crash%22%29;store=sqlite%3A"

func TestResolveEnvRanksAboveCode(t *testing.T) {
	code := []Option{WithSeed(7), WithReportDir("/code/dir"), WithLabelFilter("chapter:host-store"), WithFailpoints(`commit-after-point=return("crash")`), WithStore("mystore")}
	cases := []struct {
		name           string
		opts           []Option
		env            map[string]string
		seed           uint64
		seedFrom       string
		labels         string
		labelsFrom     string
		failpoints     []string
		failpointsFrom string
		reportDir      string
		reportDirFrom  string
	}{
		{
			name: "code alone", opts: code,
			seed: 7, seedFrom: settings.FromCode, labels: "chapter:host-store", labelsFrom: settings.FromCode,
			failpoints: []string{`commit-after-point=return("crash")`}, failpointsFrom: settings.FromCode,
			reportDir: "/code/dir", reportDirFrom: settings.FromCode,
		},
		{
			name: "every variable over code", opts: code,
			env:  map[string]string{EnvSeed: "9", EnvReportDir: "/ci/reports", EnvLabels: "row:retry"},
			seed: 9, seedFrom: EnvSeed, labels: "row:retry", labelsFrom: EnvLabels,
			failpoints: []string{`commit-after-point=return("crash")`}, failpointsFrom: settings.FromCode,
			reportDir: "/ci/reports", reportDirFrom: EnvReportDir,
		},
		{
			name: "a repro over code: seed, row and failpoints", opts: code,
			env:  map[string]string{EnvRepro: reproKill},
			seed: 42, seedFrom: EnvRepro, labels: "row:kill", labelsFrom: EnvRepro,
			failpoints: []string{`commit-locked=return("crash")`}, failpointsFrom: EnvRepro,
			reportDir: "/code/dir", reportDirFrom: settings.FromCode,
		},
		{
			name: "a repro with the report dir from the environment", opts: code,
			env:  map[string]string{EnvRepro: "v1;seed=5", EnvReportDir: "/ci/reports"},
			seed: 5, seedFrom: EnvRepro, labels: "chapter:host-store", labelsFrom: settings.FromCode,
			failpoints: nil, failpointsFrom: EnvRepro,
			reportDir: "/ci/reports", reportDirFrom: EnvReportDir,
		},
		{
			name: "a repro beside the same seed and row", opts: code,
			env:  map[string]string{EnvRepro: reproKill, EnvSeed: "42", EnvLabels: "row:kill"},
			seed: 42, seedFrom: EnvRepro, labels: "row:kill", labelsFrom: EnvRepro,
			failpoints: []string{`commit-locked=return("crash")`}, failpointsFrom: EnvRepro,
			reportDir: "/code/dir", reportDirFrom: settings.FromCode,
		},
		{
			name: "nothing: defaults", env: map[string]string{EnvSeed: "0"},
			seedFrom: settings.FromDrawn, labelsFrom: settings.FromDefault, failpointsFrom: settings.FromDefault,
			reportDir: "conform-report", reportDirFrom: settings.FromDefault,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := resolveEnv(c.opts, envOf(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.seedFrom == settings.FromDrawn {
				if s.Seed == 0 {
					t.Error("no seed was drawn")
				}
			} else if s.Seed != c.seed {
				t.Errorf("seed %d, want %d", s.Seed, c.seed)
			}
			if s.LabelFilter != c.labels || !slices.Equal(s.Failpoints, c.failpoints) || s.ReportDir != c.reportDir {
				t.Errorf("label filter %q, failpoints %q, report dir %q; want %q, %q, %q", s.LabelFilter, s.Failpoints, s.ReportDir, c.labels, c.failpoints, c.reportDir)
			}
			from := []string{s.From.Seed, s.From.Labels, s.From.Failpoints, s.From.ReportDir}
			if want := []string{c.seedFrom, c.labelsFrom, c.failpointsFrom, c.reportDirFrom}; !slices.Equal(from, want) {
				t.Errorf("sources %q, want %q", from, want)
			}
			if c.opts != nil && s.Store != "mystore" {
				t.Errorf("store %q: the environment renamed the code's store", s.Store)
			}
			h := s.Header(Version)
			for _, want := range []string{"seed ", "(" + s.From.Seed + ")", "reports in " + s.ReportDir + " (" + s.From.ReportDir + ")"} {
				if !strings.Contains(h, want) {
					t.Errorf("header %q lacks %q", h, want)
				}
			}
		})
	}
}

func TestResolveEnvRefuses(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want []string // every part of the error
	}{
		{"a seed that is no number", map[string]string{EnvSeed: "x"}, []string{EnvSeed, `"x"`}},
		{"a malformed repro", map[string]string{EnvRepro: "v9;seed=1"}, []string{EnvRepro}},
		{"a seed against the repro's", map[string]string{EnvRepro: reproKill, EnvSeed: "1"}, []string{EnvSeed + "=1", EnvRepro, "seed=42"}},
		{"a label filter against the repro's row", map[string]string{EnvRepro: reproKill, EnvLabels: "row:retry"}, []string{EnvLabels, "row:retry", EnvRepro, "row=kill"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := resolveEnv([]Option{WithSeed(3)}, envOf(c.env))
			if err == nil {
				t.Fatal("resolved; want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestResolveNoEnv: RunBinary's settings ignore the environment.
func TestResolveNoEnv(t *testing.T) {
	t.Setenv(EnvSeed, "99")
	t.Setenv(EnvReportDir, "/from/env")
	s, err := resolveEnv([]Option{WithSeed(3)}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 3 || s.ReportDir != "conform-report" {
		t.Errorf("seed %d, report dir %q; want 3 and the default", s.Seed, s.ReportDir)
	}
	o, err := resolve([]Option{WithSeed(3)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Seed != 99 || o.ReportDir != "/from/env" {
		t.Errorf("resolve: seed %d, report dir %q; want the environment's 99 and /from/env", o.Seed, o.ReportDir)
	}
}

func TestRunFlagsMerge(t *testing.T) {
	repro, err := ParseRepro(reproKill)
	if err != nil {
		t.Fatal(err)
	}
	base := settings.Flags{Store: "reference:", ReportDir: "conform-report"}
	cases := []struct {
		name    string
		flags   settings.Flags
		given   []string
		repro   *Repro
		env     map[string]string
		want    settings.Flags
		fromEnv []string
		refused []string // the parts a refusal names; nil: accepted
	}{
		{name: "flags alone", flags: settings.Flags{Store: "reference:", ReportDir: "out", Seed: 5}, given: []string{"seed", "report-dir"},
			want: settings.Flags{Store: "reference:", ReportDir: "out", Seed: 5}},
		{name: "the environment fills flags not given", flags: base,
			env:  map[string]string{EnvSeed: "9", EnvReportDir: "/ci", EnvLabels: "ob:5"},
			want: settings.Flags{Store: "reference:", ReportDir: "/ci", Seed: 9, Labels: "ob:5"}, fromEnv: []string{EnvSeed, EnvReportDir, EnvLabels}},
		{name: "a variable equal to its flag", flags: settings.Flags{Store: "reference:", ReportDir: "/ci/", Seed: 9}, given: []string{"seed", "report-dir"},
			env:  map[string]string{EnvSeed: "9", EnvReportDir: "/ci"},
			want: settings.Flags{Store: "reference:", ReportDir: "/ci/", Seed: 9}},
		{name: "CONFORM_SEED against --seed", flags: settings.Flags{Seed: 2}, given: []string{"seed"},
			env: map[string]string{EnvSeed: "1"}, refused: []string{EnvSeed + "=1", "--seed 2"}},
		{name: "CONFORM_REPORT_DIR against --report-dir", flags: settings.Flags{ReportDir: "out"}, given: []string{"report-dir"},
			env: map[string]string{EnvReportDir: "/ci"}, refused: []string{EnvReportDir, "/ci", "--report-dir", "out"}},
		{name: "CONFORM_LABEL_FILTER against --label-filter", flags: settings.Flags{Labels: "ob:5"}, given: []string{"label-filter"},
			env: map[string]string{EnvLabels: "ob:1"}, refused: []string{EnvLabels, "ob:1", "--label-filter", "ob:5"}},
		{name: "CONFORM_REPRO on run", flags: base,
			env:  map[string]string{EnvRepro: reproKill},
			want: settings.Flags{Store: "sqlite:", ReportDir: "conform-report", Seed: 42, Rows: "kill", Failpoints: []string{`commit-locked=return("crash")`}}, fromEnv: []string{EnvRepro}},
		{name: "CONFORM_REPRO against --seed", flags: settings.Flags{Seed: 3}, given: []string{"seed"},
			env: map[string]string{EnvRepro: reproKill}, refused: []string{"--seed 3", EnvRepro, "seed=42"}},
		{name: "CONFORM_REPRO against --rows", flags: settings.Flags{Rows: "retry"}, given: []string{"rows"},
			env: map[string]string{EnvRepro: reproKill}, refused: []string{"--rows", "retry", EnvRepro, "row=kill"}},
		{name: "CONFORM_REPRO against --failpoint", flags: settings.Flags{Failpoints: []string{"commit-locked=off"}}, given: []string{"failpoint"},
			env: map[string]string{EnvRepro: reproKill}, refused: []string{"--failpoint commit-locked=off", EnvRepro}},
		{name: "reproduce against --store", flags: settings.Flags{Store: "sqlite:/tmp/x", ReportDir: "d"}, given: []string{"store", "report-dir"}, repro: &repro,
			refused: []string{`--store "sqlite:/tmp/x"`, "the repro string (store=sqlite:)"}},
		{name: "reproduce with --store equal to the repro's", flags: settings.Flags{Store: "sqlite:", ReportDir: "d"}, given: []string{"store", "report-dir"}, repro: &repro,
			want: settings.Flags{Store: "sqlite:", ReportDir: "d", Seed: 42, Rows: "kill", Failpoints: []string{`commit-locked=return("crash")`}}},
		{name: "reproduce with --store, the repro naming none", flags: settings.Flags{Store: "sqlite:/tmp/x", ReportDir: "d"}, given: []string{"store", "report-dir"}, repro: &Repro{Seed: 7},
			want: settings.Flags{Store: "sqlite:/tmp/x", ReportDir: "d", Seed: 7}},
		{name: "CONFORM_REPRO against --store", flags: settings.Flags{Store: "reference:"}, given: []string{"store"},
			env: map[string]string{EnvRepro: reproKill}, refused: []string{`--store "reference:"`, EnvRepro + " (store=sqlite:)"}},
		{name: "reproduce against CONFORM_REPRO", flags: base, repro: &repro,
			env: map[string]string{EnvRepro: "v1;seed=1"}, refused: []string{"the repro string", EnvRepro}},
		{name: "reproduce against CONFORM_SEED", flags: base, repro: &repro,
			env: map[string]string{EnvSeed: "1"}, refused: []string{EnvSeed + "=1", "the repro string (seed=42)"}},
		{name: "reproduce against --seed", flags: settings.Flags{Seed: 1}, given: []string{"seed"}, repro: &repro,
			refused: []string{"--seed 1", "the repro string (seed=42)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := settings.ReadEnv(envOf(c.env))
			if err != nil {
				t.Fatal(err)
			}
			given := map[string]bool{}
			for _, g := range c.given {
				given[g] = true
			}
			f := c.flags
			f.Given = given
			s, err := settings.Build(settings.Input{Flags: &f, Repro: c.repro, Env: e})
			fromEnv := s.From.Env
			if c.refused != nil {
				if err == nil {
					t.Fatalf("accepted as %+v; want a refusal", f)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("refusal %q is more than one line", err)
				}
				for _, w := range c.refused {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q does not name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Store != c.want.Store || f.Rows != c.want.Rows || f.Labels != c.want.Labels || f.ReportDir != c.want.ReportDir || f.Seed != c.want.Seed || !slices.Equal(f.Failpoints, c.want.Failpoints) {
				t.Errorf("flags %+v, want %+v", f, c.want)
			}
			if !slices.Equal(fromEnv, c.fromEnv) {
				t.Errorf("from the environment %q, want %q", fromEnv, c.fromEnv)
			}
		})
	}
}

// TestCommandRefusesEnvAgainstFlag: a CONFORM_* variable that conflicts
// with a flag given stops the command before any row, with exit 2 and one
// line naming both.
func TestCommandRefusesEnvAgainstFlag(t *testing.T) {
	t.Setenv(EnvReportDir, t.TempDir())
	t.Setenv(EnvSeed, "1")
	var out, errb strings.Builder
	code := Command{Default: "none:"}.Run([]string{"run", "--seed", "2"}, &out, &errb)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitUsage, errb.String())
	}
	want := "conform run: CONFORM_SEED=1 conflicts with --seed 2\n"
	if errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q: the command went on", out.String())
	}
}

// TestBoundsHaveFloors checks that a run refuses a row or call timeout
// below its floor, or negative, and takes one at the floor or zero (the
// default).
func TestBoundsHaveFloors(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want string // "" for accepted
	}{
		{nil, ""},
		{[]Option{WithRowTimeout(MinRowTimeout), WithCallTimeout(MinCallTimeout)}, ""},
		{[]Option{WithRowTimeout(MinRowTimeout - time.Millisecond)}, "--timeout"},
		{[]Option{WithRowTimeout(-time.Second)}, "--timeout"},
		{[]Option{WithCallTimeout(MinCallTimeout - time.Millisecond)}, "--call-timeout"},
		{[]Option{WithCallTimeout(-time.Second)}, "--call-timeout"},
	} {
		_, err := resolveEnv(append(c.opts, WithSeed(1)), noEnv)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: refused: %v", c.opts, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "floor")):
			t.Errorf("want a refusal naming %s and its floor, got %v", c.want, err)
		}
	}
	if _, err := RunBinary(nil, WithCallTimeout(time.Millisecond)); err == nil || !strings.Contains(err.Error(), "--call-timeout") {
		t.Errorf("RunBinary with a call timeout below the floor: %v", err)
	}
}

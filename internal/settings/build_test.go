package settings

import (
	"slices"
	"testing"
)

// envOf is a getenv over a fixed map.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const reproKill = "v1;seed=42;row=kill;fp=commit-locked%3Dreturn%28%22crash%22%29;store=sqlite%3A"

// TestBuildRanks runs Build over the precedence rules: under go test the
// environment ranks above the code and CONFORM_REPRO above both; for the
// command a variable fills a flag not given and a repro fixes what it
// names. Each conflict is refused with its exact line.
func TestBuildRanks(t *testing.T) {
	kill, err := ParseRepro(reproKill)
	if err != nil {
		t.Fatal(err)
	}
	code := []Option{
		func(o *Options) {
			o.Seed, o.LabelFilter, o.ReportDir, o.Store = 7, "chapter:host-store", "/code", "mystore"
		},
		func(o *Options) { o.Failpoints = []string{"commit-after-point=off"} },
	}
	type want struct {
		seed                             uint64 // 0: drawn
		labels, reportDir, store         string
		failpoints                       []string
		explore                          int
		seedFrom, labelsFrom, fpFrom, rd string
		env                              []string
	}
	cases := []struct {
		name  string
		code  []Option
		flags *Flags
		repro *Repro
		env   map[string]string
		want  want
		err   string // the exact refusal; "" accepts
	}{
		{name: "defaults", env: map[string]string{EnvSeed: "0"},
			want: want{reportDir: DefaultReportDir, explore: DefaultExploreHistories, seedFrom: FromDrawn, labelsFrom: FromDefault, fpFrom: FromDefault, rd: FromDefault}},
		{name: "code", code: code,
			want: want{seed: 7, labels: "chapter:host-store", reportDir: "/code", store: "mystore", failpoints: []string{"commit-after-point=off"}, explore: DefaultExploreHistories,
				seedFrom: FromCode, labelsFrom: FromCode, fpFrom: FromCode, rd: FromCode}},
		{name: "environment over code", code: code, env: map[string]string{EnvSeed: "9", EnvLabels: "row:retry", EnvReportDir: "/ci", EnvExplore: "0"},
			want: want{seed: 9, labels: "row:retry", reportDir: "/ci", store: "mystore", failpoints: []string{"commit-after-point=off"}, explore: -1,
				seedFrom: EnvSeed, labelsFrom: EnvLabels, fpFrom: FromCode, rd: EnvReportDir}},
		{name: "CONFORM_REPRO over code and environment, but for the store", code: code, env: map[string]string{EnvRepro: reproKill, EnvSeed: "42", EnvReportDir: "/ci"},
			want: want{seed: 42, labels: "row:kill", reportDir: "/ci", store: "mystore", failpoints: []string{`commit-locked=return("crash")`}, explore: DefaultExploreHistories,
				seedFrom: EnvRepro, labelsFrom: EnvRepro, fpFrom: EnvRepro, rd: EnvReportDir}},
		{name: "CONFORM_SEED against CONFORM_REPRO", code: code, env: map[string]string{EnvRepro: reproKill, EnvSeed: "1"},
			err: "CONFORM_SEED=1 conflicts with CONFORM_REPRO (seed=42)"},
		{name: "CONFORM_LABEL_FILTER against CONFORM_REPRO", env: map[string]string{EnvRepro: reproKill, EnvLabels: "row:retry"},
			err: `CONFORM_LABEL_FILTER="row:retry" conflicts with CONFORM_REPRO (row=kill)`},
		{name: "a seed that is no number", env: map[string]string{EnvSeed: "x"},
			err: `CONFORM_SEED="x" is not a number`},
		{name: "a budget that is no number", env: map[string]string{EnvExplore: "-3"},
			err: `CONFORM_EXPLORE_HISTORIES="-3" is not a number of histories`},

		{name: "flags over code", code: code, flags: &Flags{Store: "reference:", ReportDir: "out", Seed: 5, Explore: 300, Given: map[string]bool{"seed": true, "report-dir": true}},
			want: want{seed: 5, reportDir: "out", store: "reference:", explore: 300, seedFrom: "--seed", labelsFrom: FromDefault, fpFrom: FromDefault, rd: "--report-dir"}},
		{name: "the environment fills flags not given", flags: &Flags{Store: "reference:", ReportDir: DefaultReportDir, Explore: 300},
			env:  map[string]string{EnvSeed: "9", EnvLabels: "ob:5", EnvReportDir: "/ci", EnvExplore: "0"},
			want: want{seed: 9, labels: "ob:5", reportDir: "/ci", store: "reference:", explore: -1, seedFrom: EnvSeed, labelsFrom: EnvLabels, fpFrom: FromDefault, rd: EnvReportDir, env: []string{EnvSeed, EnvReportDir, EnvExplore, EnvLabels}}},
		{name: "a variable equal to its flag", flags: &Flags{ReportDir: "/ci/", Seed: 9, Explore: 300, Given: map[string]bool{"seed": true, "report-dir": true}},
			env:  map[string]string{EnvSeed: "9", EnvReportDir: "/ci"},
			want: want{seed: 9, reportDir: "/ci/", explore: 300, seedFrom: "--seed", labelsFrom: FromDefault, fpFrom: FromDefault, rd: "--report-dir"}},
		{name: "CONFORM_REPRO on the command", flags: &Flags{Store: "reference:", ReportDir: DefaultReportDir, Explore: 300}, env: map[string]string{EnvRepro: reproKill},
			want: want{seed: 42, reportDir: DefaultReportDir, store: "sqlite:", failpoints: []string{`commit-locked=return("crash")`}, explore: 300,
				seedFrom: EnvRepro, labelsFrom: FromDefault, fpFrom: EnvRepro, rd: FromDefault, env: []string{EnvRepro}}},
		{name: "CONFORM_SEED against --seed", flags: &Flags{Seed: 2, Given: map[string]bool{"seed": true}}, env: map[string]string{EnvSeed: "1"},
			err: "CONFORM_SEED=1 conflicts with --seed 2"},
		{name: "CONFORM_REPORT_DIR against --report-dir", flags: &Flags{ReportDir: "out", Given: map[string]bool{"report-dir": true}}, env: map[string]string{EnvReportDir: "/ci"},
			err: `CONFORM_REPORT_DIR="/ci" conflicts with --report-dir "out"`},
		{name: "CONFORM_LABEL_FILTER against --label-filter", flags: &Flags{Labels: "ob:5", Given: map[string]bool{"label-filter": true}}, env: map[string]string{EnvLabels: "ob:1"},
			err: `CONFORM_LABEL_FILTER="ob:1" conflicts with --label-filter "ob:5"`},
		{name: "CONFORM_EXPLORE_HISTORIES against --explore-histories", flags: &Flags{Explore: 40, Given: map[string]bool{"explore-histories": true}}, env: map[string]string{EnvExplore: "7"},
			err: "CONFORM_EXPLORE_HISTORIES=7 conflicts with --explore-histories 40"},
		{name: "CONFORM_REPRO against --seed", flags: &Flags{Seed: 3, Given: map[string]bool{"seed": true}}, env: map[string]string{EnvRepro: reproKill},
			err: "--seed 3 conflicts with CONFORM_REPRO (seed=42)"},
		{name: "CONFORM_REPRO against --rows", flags: &Flags{Rows: "retry", Given: map[string]bool{"rows": true}}, env: map[string]string{EnvRepro: reproKill},
			err: `--rows "retry" conflicts with CONFORM_REPRO (row=kill)`},
		{name: "CONFORM_REPRO against --failpoint", flags: &Flags{Failpoints: []string{"commit-locked=off"}, Given: map[string]bool{"failpoint": true}}, env: map[string]string{EnvRepro: reproKill},
			err: `--failpoint commit-locked=off conflicts with CONFORM_REPRO (failpoints commit-locked=return("crash"))`},
		{name: "CONFORM_REPRO against --store", flags: &Flags{Store: "reference:", Given: map[string]bool{"store": true}}, env: map[string]string{EnvRepro: reproKill},
			err: `--store "reference:" conflicts with CONFORM_REPRO (store=sqlite:); a repro names the store it failed on, so drop store= from it to run it elsewhere`},
		{name: "reproduce against --seed", flags: &Flags{Seed: 1, Given: map[string]bool{"seed": true}}, repro: &kill,
			err: "--seed 1 conflicts with the repro string (seed=42)"},
		{name: "reproduce against CONFORM_SEED", flags: &Flags{}, repro: &kill, env: map[string]string{EnvSeed: "1"},
			err: "CONFORM_SEED=1 conflicts with the repro string (seed=42)"},
		{name: "reproduce against CONFORM_REPRO", flags: &Flags{}, repro: &kill, env: map[string]string{EnvRepro: "v1;seed=1"},
			err: `the repro string "` + reproKill + `" conflicts with CONFORM_REPRO="v1;seed=1"`},
		{name: "reproduce against --fences", flags: &Flags{Fences: "self", Given: map[string]bool{"fences": true}}, repro: &Repro{Seed: 3, Fences: "exec:h"},
			err: `--fences "self" conflicts with the repro string (fences=exec:h)`},
		{name: "reproduce with --store, the repro naming none", flags: &Flags{Store: "sqlite:/x", ReportDir: "d", Given: map[string]bool{"store": true}}, repro: &Repro{Seed: 7},
			want: want{seed: 7, reportDir: "d", store: "sqlite:/x", explore: -1, seedFrom: "the repro string", labelsFrom: FromDefault, fpFrom: "the repro string", rd: FromDefault}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := ReadEnv(envOf(c.env))
			var s Settings
			if err == nil {
				s, err = Build(Input{Code: c.code, Flags: c.flags, Repro: c.repro, Env: e})
			}
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if w.seed == 0 && s.Seed == 0 || w.seed != 0 && s.Seed != w.seed {
				t.Errorf("seed %d, want %d (0: drawn)", s.Seed, w.seed)
			}
			if s.LabelFilter != w.labels || s.ReportDir != w.reportDir || s.Store != w.store || !slices.Equal(s.Failpoints, w.failpoints) || s.Explore != w.explore {
				t.Errorf("labels %q, report dir %q, store %q, failpoints %q, explore %d; want %q, %q, %q, %q, %d",
					s.LabelFilter, s.ReportDir, s.Store, s.Failpoints, s.Explore, w.labels, w.reportDir, w.store, w.failpoints, w.explore)
			}
			from := []string{s.From.Seed, s.From.Labels, s.From.Failpoints, s.From.ReportDir}
			if ws := []string{w.seedFrom, w.labelsFrom, w.fpFrom, w.rd}; !slices.Equal(from, ws) {
				t.Errorf("sources %q, want %q", from, ws)
			}
			if !slices.Equal(s.From.Env, w.env) {
				t.Errorf("from the environment %q, want %q", s.From.Env, w.env)
			}
		})
	}
}

// TestSettingsRenderRepros: the repro lines carry the run's seed,
// failpoints and store, and a fences run's names conform reproduce alone.
func TestSettingsRenderRepros(t *testing.T) {
	s := Settings{Options: Options{Seed: 9, Store: "sqlite:", Failpoints: []string{"commit-locked=off"}}}
	want := "conform reproduce 'v1;seed=9;row=kill;fp=commit-locked%3Doff;store=sqlite%3A'   (under go test: CONFORM_REPRO='v1;seed=9;row=kill;fp=commit-locked%3Doff;store=sqlite%3A' go test ./...)"
	if got := s.Repro("kill"); got != want {
		t.Errorf("Repro = %q, want %q", got, want)
	}
	if got := s.ReproHist("explore-histories", 4); got != "conform reproduce 'v1;seed=9;row=explore-histories;fp=commit-locked%3Doff;store=sqlite%3A;hist=4'   (under go test: CONFORM_REPRO='v1;seed=9;row=explore-histories;fp=commit-locked%3Doff;store=sqlite%3A;hist=4' go test ./...)" {
		t.Errorf("ReproHist = %q", got)
	}
	f := Settings{Options: Options{Seed: 3, Store: "fences:self", Fences: "self"}}
	if got := f.Repro("adm-try"); got != "conform reproduce 'v1;seed=3;row=adm-try;fences=self'" {
		t.Errorf("a fences run's Repro = %q", got)
	}
}

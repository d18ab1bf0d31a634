package spec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// tree builds a chapter-like tree: an ordered container with a BeforeAll
// and an AfterAll around two rows of specs, and logs what ran.
func tree(log *[]string, cof bool, bodies map[string]func(ctx context.Context)) *Tree {
	t := NewTree()
	t.Describe("chapter", Opts{Ordered: true, ContinueOnFailure: cof, Labels: []string{"chapter:c"}}, func() {
		t.BeforeAll(Opts{}, func(context.Context) { *log = append(*log, "before") })
		t.AfterAll(func() { *log = append(*log, "after") })
		for _, row := range []string{"a", "b"} {
			t.Describe("row "+row, Opts{Labels: []string{"row:" + row}}, func() {
				for _, s := range []string{"1", "2"} {
					name := row + s
					t.It("spec "+name, Opts{Labels: []string{"ob:" + s}}, func(ctx context.Context) {
						*log = append(*log, name)
						if f := bodies[name]; f != nil {
							f(ctx)
						}
					})
				}
			})
		}
	})
	return t
}

func states(rep *Report) string {
	var out []string
	for _, r := range rep.Specs {
		out = append(out, r.Text[len("spec "):]+"="+r.State.String())
	}
	return strings.Join(out, " ")
}

func TestRunOrderAndHooks(t *testing.T) {
	var log []string
	rep := Run(context.Background(), tree(&log, true, nil), Config{})
	if got := strings.Join(log, " "); got != "before a1 a2 b1 b2 after" {
		t.Errorf("ran %q", got)
	}
	if got := states(rep); got != "a1=passed a2=passed b1=passed b2=passed" {
		t.Errorf("states %q", got)
	}
	r := rep.Specs[2]
	if r.FullText() != "chapter row b spec b1" || strings.Join(r.Labels, ",") != "chapter:c,row:b,ob:1" {
		t.Errorf("result %q %v", r.FullText(), r.Labels)
	}
	if rep.Interrupted {
		t.Error("interrupted")
	}
}

func TestRunFailSkipAndContinue(t *testing.T) {
	bodies := map[string]func(context.Context){
		"a1": func(context.Context) { Fail("broke") },
		"a2": func(context.Context) { Skip("not today") },
		"b1": func(context.Context) { panic("oops") },
	}
	var log []string
	rep := Run(context.Background(), tree(&log, true, bodies), Config{})
	if got := states(rep); got != "a1=failed a2=skipped b1=panicked b2=passed" {
		t.Errorf("continue on failure: %q", got)
	}
	if f := rep.Specs[0]; f.Message != "broke" || !strings.Contains(f.Location, "run_test.go:") {
		t.Errorf("failure %q at %q", f.Message, f.Location)
	}
	if p := rep.Specs[2]; p.Panic != "oops" || !strings.Contains(p.Location, "run_test.go:") {
		t.Errorf("panic %q at %q", p.Panic, p.Location)
	}
	log = nil
	rep = Run(context.Background(), tree(&log, false, bodies), Config{})
	if got := states(rep); got != "a1=failed a2=skipped b1=skipped b2=skipped" {
		t.Errorf("ordered, stop at failure: %q", got)
	}
	if got := strings.Join(log, " "); got != "before a1 after" {
		t.Errorf("ran %q", got)
	}
}

func TestRunBeforeAllFails(t *testing.T) {
	tr := NewTree()
	var after bool
	tr.Describe("c", Opts{Ordered: true, ContinueOnFailure: true}, func() {
		tr.BeforeAll(Opts{}, func(context.Context) { Fail("could not start") })
		tr.AfterAll(func() { after = true })
		tr.It("s1", Opts{}, func(context.Context) {})
		tr.It("s2", Opts{}, func(context.Context) {})
	})
	rep := Run(context.Background(), tr, Config{})
	if rep.Specs[0].State != Failed || rep.Specs[0].Message != "could not start" || rep.Specs[1].State != Skipped || rep.Specs[1].Ran {
		t.Errorf("%+v %+v", rep.Specs[0], rep.Specs[1])
	}
	if !after {
		t.Error("AfterAll did not run")
	}
}

func TestRunFilter(t *testing.T) {
	var log []string
	match, err := ParseFilter("row:b && ob:2 || row:nothing")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	rep := Run(context.Background(), tree(&log, true, nil), Config{Filter: match, OnSpec: func(r *Result) { seen = append(seen, fmt.Sprint(r.Ran)) }})
	if got := states(rep); got != "a1=skipped a2=skipped b1=skipped b2=passed" {
		t.Errorf("states %q", got)
	}
	if got := strings.Join(log, " "); got != "before b2 after" {
		t.Errorf("ran %q", got)
	}
	if strings.Join(seen, " ") != "false false false true" {
		t.Errorf("OnSpec saw %v", seen)
	}
	var none []string
	match, _ = ParseFilter("row:none")
	Run(context.Background(), tree(&none, true, nil), Config{Filter: match})
	if len(none) != 0 {
		t.Errorf("a filter that selects nothing ran %v", none)
	}
	if _, err := ParseFilter("row:a &&"); err == nil {
		t.Error("a malformed filter parsed")
	}
}

func TestRunCleanup(t *testing.T) {
	var log []string
	bodies := map[string]func(context.Context){
		"a1": func(ctx context.Context) {
			From(ctx).Defer(func() { log = append(log, "clean1") })
			From(ctx).Defer(func() { log = append(log, "clean2") })
		},
		"a2": func(ctx context.Context) {
			From(ctx).DeferErr(func() error { return errors.New("no") })
		},
	}
	rep := Run(context.Background(), tree(&log, true, bodies), Config{})
	if got := strings.Join(log, " "); got != "before a1 clean2 clean1 a2 b1 b2 after" {
		t.Errorf("ran %q", got)
	}
	if r := rep.Specs[1]; r.State != Failed || !strings.Contains(r.Message, "no") {
		t.Errorf("a cleanup's error: %s %q", r.State, r.Message)
	}
}

func TestRunTimeout(t *testing.T) {
	tr := NewTree()
	tr.Describe("c", Opts{Ordered: true, ContinueOnFailure: true}, func() {
		tr.It("heeds", Opts{Timeout: 20 * time.Millisecond}, func(ctx context.Context) { <-ctx.Done() })
		tr.It("ignores", Opts{Timeout: 20 * time.Millisecond}, func(ctx context.Context) { time.Sleep(time.Hour) })
		tr.It("after", Opts{}, func(ctx context.Context) {})
	})
	start := time.Now()
	rep := Run(context.Background(), tr, Config{Grace: 50 * time.Millisecond})
	if got := rep.Specs[0].State.String() + " " + rep.Specs[1].State.String() + " " + rep.Specs[2].State.String(); got != "timedout timedout passed" {
		t.Errorf("states %s", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRunInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var log []string
	bodies := map[string]func(context.Context){
		"a2": func(c context.Context) { cancel(); <-c.Done() },
	}
	rep := Run(ctx, tree(&log, true, bodies), Config{})
	if got := states(rep); got != "a1=passed a2=interrupted b1=skipped b2=skipped" {
		t.Errorf("states %q", got)
	}
	if !rep.Interrupted {
		t.Error("not interrupted")
	}
	if got := strings.Join(log, " "); got != "before a1 a2 after" {
		t.Errorf("ran %q", got)
	}
	rep = Run(context.Background(), tree(&log, true, nil), Config{Timeout: time.Nanosecond})
	if !rep.Interrupted {
		t.Error("the run's timeout did not interrupt it")
	}
}

func TestRecords(t *testing.T) {
	tr := NewTree()
	tr.It("records", Opts{}, func(ctx context.Context) {
		s := From(ctx)
		s.NotExercised("part: why")
		s.InStoreGap()
		s.SetRepro("first")
		s.SetRepro("second")
		fmt.Fprint(s.Writer(), "out")
		s.NothingExercised("nothing")
	})
	tr.It("not run", Opts{}, func(ctx context.Context) { From(ctx).NotRun("down") })
	rep := Run(context.Background(), tr, Config{})
	r := rep.Specs[0]
	if r.State != Skipped || !r.Nothing || strings.Join(r.NotExercised, "|") != "part: why|nothing" || r.InStoreGaps != 1 || r.Repro != "first" || r.Output != "out" {
		t.Errorf("%+v", r)
	}
	if r := rep.Specs[1]; r.State != Skipped || len(r.NotRun) != 1 || r.Message != "not run: down" {
		t.Errorf("%+v", r)
	}
}

func helperFail() {
	Helper()
	Fail("in a helper")
}

func TestHelperLocation(t *testing.T) {
	tr := NewTree()
	tr.It("s", Opts{}, func(context.Context) {
		helperFail() // the location
	})
	rep := Run(context.Background(), tr, Config{})
	if loc := rep.Specs[0].Location; !strings.HasSuffix(loc, fmt.Sprintf("run_test.go:%d", lineOf(t, "helperFail() // the location"))) {
		t.Errorf("location %q", loc)
	}
}

func lineOf(t *testing.T, s string) int {
	t.Helper()
	b, err := readFile("run_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(b, "\n") {
		if strings.Contains(l, s) && !strings.Contains(l, "lineOf") {
			return i + 1
		}
	}
	t.Fatalf("no line %q", s)
	return 0
}

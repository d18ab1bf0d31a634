package engine

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/conform-spi/conform/internal/spec"
)

// entryResult names the report entry through which a spec registered by
// Register hands its result, as a Go value, to the ReportAfterSuite.
const entryResult = "conform/result"

// Register adds conform's chapters to the caller's own Ginkgo suite, for
// newRealm, and a ReportAfterSuite that writes the reports. It returns
// true, so a suite file can say `var _ = harness.Register(newRealm)`. The
// run's settings come from opts under the CONFORM_* environment, which
// ranks above them (see the package doc). Rows are selected by Ginkgo's
// own flags (-ginkgo.label-filter) as usual: the suite is the caller's, so
// a label filter from opts or CONFORM_* (or a repro's row) does not
// select rows here.
func Register(newRealm NewRealm, opts ...Option) bool {
	o, err := resolve(opts)
	if err != nil {
		panic("conform: " + err.Error())
	}
	s := newSuite(o)
	t := s.tree(newRealm)
	BeforeSuite(func() {
		s.start = time.Now()
		if err := s.arm(); err != nil {
			Fail("conform: " + err.Error())
		}
	})
	ginkgoItems(t.Root)
	if o.Progress != nil {
		ReportAfterEach(func(r SpecReport) { progressLine(o.Progress, resultOf(r)) })
	}
	ReportAfterSuite("conform reports", func(r Report) {
		s.disarm()
		if s.start.IsZero() {
			s.start = r.StartTime
		}
		var specs []*spec.Result
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt || sr.State.Is(types.SpecStateFailureStates) {
				specs = append(specs, resultOf(sr))
			}
		}
		interrupted := false
		for _, reason := range r.SpecialSuiteFailureReasons {
			if strings.Contains(reason, "Interrupted") {
				interrupted = true
			}
		}
		run, werr := s.finish(&spec.Report{Specs: specs}, r.SuiteConfig.LabelFilter, interrupted)
		if msg := verdictFailure(run, werr); msg != "" {
			Fail(msg)
		}
	})
	return true
}

// ginkgoItems registers c's items as Ginkgo nodes: containers with the
// same decorations, BeforeAll and AfterAll bodies, and specs whose bodies
// run ours (ginkgoBody).
func ginkgoItems(c *spec.Container) {
	for _, h := range c.BeforeAll {
		args := []any{func(ctx SpecContext) {
			ginkgoBody(ctx, spec.NewSpec(&spec.Result{}), h.Body)
		}}
		if h.Timeout > 0 {
			args = append(args, NodeTimeout(h.Timeout))
		}
		BeforeAll(args...)
	}
	for _, f := range c.AfterAll {
		AfterAll(f)
	}
	for _, it := range c.Items {
		switch it := it.(type) {
		case *spec.Container:
			args := decorations(it.Opts)
			args = append(args, func() { ginkgoItems(it) })
			Describe(it.Text, args...)
		case *spec.Leaf:
			args := decorations(it.Opts)
			if it.Timeout > 0 {
				args = append(args, SpecTimeout(it.Timeout))
			}
			body := it.Body
			args = append(args, func(ctx SpecContext) {
				res := &spec.Result{}
				AddReportEntry(entryResult, res, ReportEntryVisibilityNever)
				sp := spec.NewSpec(res)
				DeferCleanup(func() { res.Output = sp.Output() })
				DeferCleanup(sp.RunCleanups)
				ginkgoBody(ctx, sp, body)
			})
			It(it.Text, args...)
		}
	}
}

// decorations returns Ginkgo's decorators for o, its timeout aside.
func decorations(o spec.Opts) []any {
	var d []any
	if o.Ordered {
		d = append(d, Ordered)
	}
	if o.ContinueOnFailure {
		d = append(d, ContinueOnFailure)
	}
	if len(o.Labels) > 0 {
		d = append(d, Label(o.Labels...))
	}
	return d
}

// ginkgoBody runs body as a Ginkgo node: our Fail becomes Ginkgo's Fail,
// our Skip Ginkgo's Skip; any other panic goes on to Ginkgo.
func ginkgoBody(ctx context.Context, sp *spec.Spec, body func(ctx context.Context)) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case *spec.Failure:
			sp.SetLocation(v.Location)
			Fail(v.Message)
		case *spec.Skipping:
			Skip(v.Message)
		default:
			panic(v)
		}
	}()
	body(spec.With(ctx, sp))
}

// resultOf returns the result of one of Ginkgo's spec reports: what our
// body recorded, with the state, failure and time Ginkgo saw.
func resultOf(sr SpecReport) *spec.Result {
	res := &spec.Result{}
	for _, e := range sr.ReportEntries {
		if r, ok := e.GetRawValue().(*spec.Result); ok && e.Name == entryResult {
			res = r
			break
		}
	}
	out := *res
	out.Path = sr.ContainerHierarchyTexts
	out.Text = sr.LeafNodeText
	out.Labels = sr.Labels()
	if sr.LeafNodeType != types.NodeTypeIt {
		out.Node = sr.LeafNodeType.String()
	}
	out.Duration = sr.RunTime
	out.Message = sr.Failure.Message
	out.Panic = sr.Failure.ForwardedPanic
	if out.Location == "" && sr.State.Is(types.SpecStateFailureStates) {
		out.Location = sr.Failure.Location.String()
	}
	if sr.CapturedGinkgoWriterOutput != "" {
		out.Output += sr.CapturedGinkgoWriterOutput
	}
	out.Ran = sr.State != types.SpecStateSkipped || sr.Failure.Message != ""
	switch {
	case sr.State == types.SpecStatePassed:
		out.State = spec.Passed
	case sr.State == types.SpecStateInterrupted || sr.State == types.SpecStateAborted && sr.Failure.Message == "":
		out.State = spec.Interrupted
	case sr.State == types.SpecStateTimedout:
		out.State = spec.TimedOut
	case sr.State == types.SpecStatePanicked:
		out.State = spec.Panicked
	case sr.State.Is(types.SpecStateFailureStates):
		out.State = spec.Failed
	default:
		out.State = spec.Skipped
	}
	return &out
}

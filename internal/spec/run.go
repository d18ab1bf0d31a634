package spec

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// DefaultGrace is how long the runner waits for a node to return once its
// context ended (a timeout, an interrupt) before it abandons the node.
const DefaultGrace = 30 * time.Second

// Config is how a tree runs.
type Config struct {
	// Filter selects the specs to run by their labels; nil selects all.
	Filter func(labels []string) bool
	// OnSpec is called after each spec, skipped ones included.
	OnSpec func(r *Result)
	// Timeout bounds the whole run; 0 means no bound. A run that reaches
	// it ends as interrupted.
	Timeout time.Duration
	// Grace is DefaultGrace when 0.
	Grace time.Duration
}

// Report is what a run of a tree gave.
type Report struct {
	// Specs holds every spec's result in tree order.
	Specs []*Result
	// Interrupted is set when the run's context ended (or its Timeout
	// passed) before the run did.
	Interrupted bool
	Start       time.Time
	Duration    time.Duration
}

// Run runs t's selected specs in order and returns their results. Ending
// ctx interrupts the run: the running spec's context ends, the specs after
// it are skipped, and the AfterAll bodies of the containers that started
// still run.
func Run(ctx context.Context, t *Tree, cfg Config) *Report {
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	r := &runner{cfg: cfg, ctx: ctx, state: map[*Container]*cstate{}, rep: &Report{Start: time.Now()}}
	r.count(t.Root, nil)
	r.walk(t.Root, nil, nil, nil)
	r.rep.Interrupted = ctx.Err() != nil
	r.rep.Duration = time.Since(r.rep.Start)
	return r.rep
}

type runner struct {
	cfg   Config
	ctx   context.Context
	state map[*Container]*cstate
	rep   *Report
}

// cstate is a container's state in a run.
type cstate struct {
	left     int  // selected specs not yet done
	prepared bool // its BeforeAll ran
	broken   bool // its BeforeAll failed or skipped: its specs are skipped
	failed   bool // a spec failed in it, an ordered container without ContinueOnFailure
}

func (r *runner) selected(labels []string) bool {
	return r.cfg.Filter == nil || r.cfg.Filter(labels)
}

// count sets every container's count of selected specs.
func (r *runner) count(c *Container, labels []string) int {
	labels = append(labels[:len(labels):len(labels)], c.Labels...)
	n := 0
	for _, it := range c.Items {
		switch it := it.(type) {
		case *Container:
			n += r.count(it, labels)
		case *Leaf:
			if r.selected(joinLabels(labels, it.Labels)) {
				n++
			}
		}
	}
	r.state[c] = &cstate{left: n}
	return n
}

func joinLabels(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	seen := map[string]bool{}
	for _, l := range append(append([]string(nil), a...), b...) {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// walk runs c's items; stack holds c's ancestors and c, outermost first.
func (r *runner) walk(c *Container, stack []*Container, path, labels []string) {
	stack = append(stack[:len(stack):len(stack)], c)
	labels = append(labels[:len(labels):len(labels)], c.Labels...)
	if c.Text != "" {
		path = append(path[:len(path):len(path)], c.Text)
	}
	for _, it := range c.Items {
		switch it := it.(type) {
		case *Container:
			r.walk(it, stack, path, labels)
		case *Leaf:
			res := &Result{Path: append([]string(nil), path...), Text: it.Text, Labels: joinLabels(labels, it.Labels), State: Skipped}
			if r.selected(res.Labels) {
				r.leaf(it, res, stack)
				r.done(stack)
			}
			r.rep.Specs = append(r.rep.Specs, res)
			if r.cfg.OnSpec != nil {
				r.cfg.OnSpec(res)
			}
		}
	}
}

// done counts one selected spec done in each container of stack, and
// runs the AfterAll bodies of those left with none.
func (r *runner) done(stack []*Container) {
	for i := len(stack) - 1; i >= 0; i-- {
		c := stack[i]
		st := r.state[c]
		st.left--
		if st.left == 0 && st.prepared {
			for _, f := range c.AfterAll {
				r.node(NewSpec(&Result{}), 0, false, func(context.Context) { f() })
			}
		}
	}
}

// leaf runs one selected spec, first the BeforeAll bodies of its
// containers not yet prepared.
func (r *runner) leaf(l *Leaf, res *Result, stack []*Container) {
	if r.ctx.Err() != nil {
		return
	}
	for _, c := range stack {
		if st := r.state[c]; st.broken || st.failed {
			return
		}
	}
	res.Ran = true
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	sp := NewSpec(res)
	defer func() { res.Output = sp.Output() }()
	for _, c := range stack {
		st := r.state[c]
		if st.prepared {
			continue
		}
		st.prepared = true
		for _, h := range c.BeforeAll {
			o := r.nodeOf("node", sp, h.Timeout, true, h.Body)
			if o.state != Passed {
				st.broken = true
				o.set(res)
				r.cleanup(sp, res)
				r.ordered(stack, res)
				return
			}
		}
	}
	o := r.node(sp, l.Timeout, true, l.Body)
	o.set(res)
	r.cleanup(sp, res)
	r.ordered(stack, res)
}

// cleanup runs the spec's deferred functions; an error fails a spec that
// had not failed.
func (r *runner) cleanup(sp *Spec, res *Result) {
	o := r.node(sp, 0, false, func(context.Context) {
		if err := sp.RunCleanups(); err != nil {
			Fail("DeferCleanup callback returned error: " + err.Error())
		}
	})
	if o.state != Passed && (res.State == Passed || res.State == Skipped) {
		o.set(res)
	}
}

// ordered marks the outermost ordered container of stack failed when res
// failed and no container of stack continues on failure.
func (r *runner) ordered(stack []*Container, res *Result) {
	if !res.State.Failure() {
		return
	}
	var outer *Container
	for _, c := range stack {
		if c.ContinueOnFailure {
			return
		}
		if c.Ordered && outer == nil {
			outer = c
		}
	}
	if outer != nil {
		r.state[outer].failed = true
	}
}

// outcome is how one node ended.
type outcome struct {
	state             State
	msg, loc, panicky string
}

func (o outcome) set(res *Result) {
	res.State, res.Message, res.Location, res.Panic = o.state, o.msg, o.loc, o.panicky
}

// node runs body on a goroutine of its own, under a context that ends
// at timeout (when not 0) or when the run's does, when interruptible.
// Once the context ended, the node has r.cfg.Grace to return before it is
// abandoned. A node that is not interruptible runs under a context of its
// own, and has the grace from the run's end.
func (r *runner) node(sp *Spec, timeout time.Duration, interruptible bool, body func(ctx context.Context)) outcome {
	return r.nodeOf("spec", sp, timeout, interruptible, body)
}

// nodeOf is node for a node of kind ("spec", "node"), as its timeout
// message names it.
func (r *runner) nodeOf(kind string, sp *Spec, timeout time.Duration, interruptible bool, body func(ctx context.Context)) outcome {
	parent := r.ctx
	if !interruptible {
		parent = context.WithoutCancel(r.ctx)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		o := outcome{state: Passed}
		defer func() { done <- o }()
		defer func() {
			if v := recover(); v != nil {
				o = recovered(v)
			}
		}()
		body(With(ctx, sp))
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	grace := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(r.cfg.Grace):
		}
	}
	select {
	case o := <-done:
		return o
	case <-timer:
		grace()
		return outcome{state: TimedOut, msg: "A " + kind + " timeout occurred"}
	case <-r.ctx.Done():
		if !interruptible {
			select {
			case o := <-done:
				return o
			case <-time.After(r.cfg.Grace):
				return outcome{state: Interrupted, msg: "Interrupted by User"}
			}
		}
		grace()
		return outcome{state: Interrupted, msg: "Interrupted by User"}
	}
}

// recovered turns a node's panic value into its outcome.
func recovered(v any) outcome {
	switch v := v.(type) {
	case *Failure:
		return outcome{state: Failed, msg: v.Message, loc: v.Location}
	case *Skipping:
		return outcome{state: Skipped, msg: v.Message}
	}
	return outcome{state: Panicked, msg: "Test Panicked", loc: panicLocation(), panicky: fmt.Sprint(v)}
}

// panicLocation returns file:line of the frame that panicked: the first
// outside the runtime and this package.
func panicLocation() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !ours(f) {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !more {
			return ""
		}
	}
}

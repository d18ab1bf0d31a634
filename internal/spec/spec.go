package spec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/conform-spi/conform/reports"
)

// State is how a spec ended.
type State int

// The states of a spec.
const (
	// Skipped: the spec did not run (the label filter left it out, an
	// earlier failure or an interrupt skipped it) or it called Skip.
	Skipped State = iota
	Passed
	Failed
	Panicked
	TimedOut
	Interrupted
)

var stateNames = [...]string{"skipped", "passed", "failed", "panicked", "timedout", "interrupted"}

// String returns the state's name.
func (s State) String() string { return stateNames[s] }

// Failure reports whether s counts as a failure: failed, panicked or timed out.
func (s State) Failure() bool { return s == Failed || s == Panicked || s == TimedOut }

// Result is what one spec gave: how it ended and what it recorded.
type Result struct {
	// Path holds the texts of the containers around the spec, outermost
	// first, without the root.
	Path []string
	// Text is the spec's own text. A result of no spec (a run that
	// could not start) has Text "" and Node set.
	Text string
	// Node names what failed when it was not a spec ("BeforeSuite").
	Node string
	// Labels are the spec's labels and those of its containers.
	Labels []string
	State  State
	// Ran is set when the spec's body (or its container's BeforeAll) was
	// started; a spec filtered out or skipped before it starts has Ran false.
	Ran bool
	// Message is the failure's text, or the skip's.
	Message string
	// Location is where the failure was raised, file:line.
	Location string
	// Panic is the value the spec panicked with.
	Panic    string
	Duration time.Duration
	// Output is what the spec wrote to its Writer.
	Output string

	// Failures are the structured failures the spec recorded.
	Failures []reports.Failure
	// NotExercised lists the parts the spec could not reach, each with
	// why, in the order recorded (NothingExercised's why among them).
	NotExercised []string
	// Nothing is set when the spec reached none of what it checks.
	Nothing bool
	// InStoreGaps counts the parts not exercised because the store never
	// reached an in-store site.
	InStoreGaps int
	// NotRun holds why the spec was not run, when the realm could not serve it.
	NotRun []string
	// Repro is the spec's repro line, when it names more than the row.
	Repro string
	// Exploration is the exploration chapter's record.
	Exploration *reports.Exploration
}

// FullText returns the containers' texts and the spec's, joined by spaces.
func (r *Result) FullText() string {
	return strings.TrimSpace(strings.Join(append(append([]string(nil), r.Path...), r.Text), " "))
}

// Spec is the handle of a running spec: what its body records goes to
// its Result. Its methods may be called from any goroutine.
type Spec struct {
	mu       sync.Mutex
	res      *Result
	out      syncBuffer
	cleanups []func() error
}

type ctxKey struct{}

// From returns the running spec ctx belongs to, or nil outside a spec.
func From(ctx context.Context) *Spec {
	s, _ := ctx.Value(ctxKey{}).(*Spec)
	return s
}

// With returns ctx carrying s; From(ctx) returns s.
func With(ctx context.Context, s *Spec) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// NewSpec returns a handle recording into res. The runner makes one per
// spec; Register's Ginkgo bodies make their own.
func NewSpec(res *Result) *Spec { return &Spec{res: res} }

// FullText returns the spec's full text (Result.FullText).
func (s *Spec) FullText() string { return s.res.FullText() }

// Writer returns the spec's output, which its Result keeps.
func (s *Spec) Writer() io.Writer { return &s.out }

// Defer runs f when the spec ends, after its body, last deferred first.
func (s *Spec) Defer(f func()) {
	s.DeferErr(func() error { f(); return nil })
}

// DeferErr is Defer for an f whose error fails the spec.
func (s *Spec) DeferErr(f func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}

// AddFailure records a structured failure.
func (s *Spec) AddFailure(f reports.Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.Failures = append(s.res.Failures, f)
}

// NotExercised records a part that could not be reached, with why.
func (s *Spec) NotExercised(part string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.NotExercised = append(s.res.NotExercised, part)
}

// InStoreGap records that one part not exercised needs an in-store site
// the store never reached.
func (s *Spec) InStoreGap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.InStoreGaps++
}

// NothingExercised records that the spec reached none of what it checks,
// and skips it.
func (s *Spec) NothingExercised(why string) {
	s.mu.Lock()
	s.res.NotExercised = append(s.res.NotExercised, why)
	s.res.Nothing = true
	s.mu.Unlock()
	Skip("not exercised: " + why)
}

// NotRun records why the spec is not run, and skips it.
func (s *Spec) NotRun(why string) {
	s.mu.Lock()
	s.res.NotRun = append(s.res.NotRun, why)
	s.mu.Unlock()
	Skip("not run: " + why)
}

// SetRepro records the spec's repro line; the first one stays.
func (s *Spec) SetRepro(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.res.Repro == "" {
		s.res.Repro = line
	}
}

// SetExploration records the exploration chapter's record.
func (s *Spec) SetExploration(x *reports.Exploration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.Exploration = x
}

// RunCleanups runs the deferred functions, last first, and returns the
// first error one returned.
func (s *Spec) RunCleanups() error {
	var first error
	for {
		s.mu.Lock()
		n := len(s.cleanups)
		if n == 0 {
			s.mu.Unlock()
			return first
		}
		f := s.cleanups[n-1]
		s.cleanups = s.cleanups[:n-1]
		s.mu.Unlock()
		if err := f(); err != nil && first == nil {
			first = err
		}
	}
}

// Output returns what the spec wrote so far.
func (s *Spec) Output() string { return s.out.String() }

// Failure is the panic value of Fail.
type Failure struct {
	Message  string
	Location string
}

// Skipping is the panic value of Skip.
type Skipping struct{ Message string }

// Fail fails the running spec with message. It must be called from the
// spec's own goroutine: it panics, and the runner recovers.
func Fail(message string) {
	panic(&Failure{Message: message, Location: location()})
}

// Skip ends the running spec as skipped, from the spec's own goroutine.
func Skip(message string) {
	panic(&Skipping{Message: message})
}

// helpers holds the functions marked by Helper: a failure's location is
// their caller's. It records code, not runs.
var helpers sync.Map

// Helper marks the calling function as a helper: a failure raised in it
// is located at its caller.
func Helper() {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 1 {
		f, _ := runtime.CallersFrames(pc[:]).Next()
		helpers.Store(f.Function, true)
	}
}

const pkgPath = "github.com/conform-spi/conform/internal/spec."

// location returns file:line of the first caller outside this package
// that is no helper.
func location() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !ours(f) && !strings.HasPrefix(f.Function, "runtime.") {
			if _, h := helpers.Load(f.Function); !h {
				return fmt.Sprintf("%s:%d", f.File, f.Line)
			}
		}
		if !more {
			return ""
		}
	}
}

// ours reports whether f is of this package, its tests aside.
func ours(f runtime.Frame) bool {
	return strings.HasPrefix(f.Function, pkgPath) && !strings.HasSuffix(f.File, "_test.go")
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// SetLocation records where the spec's failure was raised.
func (s *Spec) SetLocation(loc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.Location = loc
}

package harness

import (
	"io"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reports"
)

// NewRealm returns a fresh, empty realm: a factory whose Open starts a
// new process over it. Each chapter gets its own. A factory that
// implements io.Closer is closed when its chapter ends.
type NewRealm = engine.NewRealm

// Option sets one setting of a run.
type Option = engine.Option

// Run runs the store's chapters over newRealm and returns the run's
// report model. It writes the four reports (WithReportDir) and fails t
// unless the verdict passes: a row failed, left something not exercised
// or did not run, or the selection held no row. It logs the effective
// settings first. The CONFORM_* environment ranks above opts.
//
// Each call is a run of its own, with its own injector and state, so a
// test binary may call Run any number of times (two configurations of one
// store, say).
func Run(t *testing.T, newRealm NewRealm, opts ...Option) *reports.Run {
	t.Helper()
	return engine.Run(t, newRealm, opts...)
}

// Register adds the store's chapters to the caller's own Ginkgo suite,
// with a ReportAfterSuite that writes the reports. It returns true, so a
// suite file can say `var _ = harness.Register(newRealm)`. Rows are
// selected by Ginkgo's own flags.
func Register(newRealm NewRealm, opts ...Option) bool {
	return engine.Register(newRealm, opts...)
}

// WithSeed fixes the seed that drives every random choice; without it a
// seed is drawn and written into the report and the repro lines.
func WithSeed(seed uint64) Option { return engine.WithSeed(seed) }

// WithLabelFilter selects rows by label expression, such as
// "row:stale-fence || ob:5".
func WithLabelFilter(f string) Option { return engine.WithLabelFilter(f) }

// WithReportDir sets where the four reports go: "conform-report" by
// default, "-" for none.
func WithReportDir(dir string) Option { return engine.WithReportDir(dir) }

// WithFailpoints arms "name=terms" failpoints for the whole run.
func WithFailpoints(fps ...string) Option { return engine.WithFailpoints(fps...) }

// WithStore names the store in the reports and repro lines.
func WithStore(name string) Option { return engine.WithStore(name) }

// WithProgress prints a line per spec, and a summary, to w.
func WithProgress(w io.Writer) Option { return engine.WithProgress(w) }

// WithExplore sets the exploration chapter's budget in histories (0 or
// less: the default, 300).
func WithExplore(histories int) Option { return engine.WithExplore(histories) }

// WithoutExplore leaves the exploration chapter out.
func WithoutExplore() Option { return engine.WithoutExplore() }

// WithExploreParallel plays n exploration histories at once, each over a
// realm of its own. Only a store whose realms share no clock may use it.
func WithExploreParallel(n int) Option { return engine.WithExploreParallel(n) }

// WithoutInStoreFaults declares that the store calls no in-store site.
// The run can then be "conformant without in-store faults", and every
// report says what that left out.
func WithoutInStoreFaults() Option { return engine.WithoutInStoreFaults() }

// WithKeepRealms keeps every chapter's realm after the run instead of
// closing its factory.
func WithKeepRealms() Option { return engine.WithKeepRealms() }

// WithCallTimeout fixes how long one store call may take before it is a
// hang; by default the bound follows the store's own latency.
func WithCallTimeout(d time.Duration) Option { return engine.WithCallTimeout(d) }

// WithRowTimeout bounds the harness's own time in each spec (60 s by
// default).
func WithRowTimeout(d time.Duration) Option { return engine.WithRowTimeout(d) }

// Opener opens the store a URL names, as a NewRealm.
type Opener = engine.Opener

// Command is a conform command of a store's own: Openers map URL schemes
// (the part before the first ':') onto stores, and Default is the URL
// `conform run` takes without --store.
//
//	func main() {
//		harness.Command{Openers: map[string]harness.Opener{"mystore": open}, Default: "mystore:"}.Main()
//	}
type Command struct {
	Openers map[string]Opener
	Default string
}

// Main runs the command on the process's arguments and exits with its
// code.
func (c Command) Main() {
	engine.Command{Openers: c.Openers, Default: c.Default}.Main()
}

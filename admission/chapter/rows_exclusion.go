//go:build linux

package chapter

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission"
)

// exclusionRows: "An admission holds its set of fences SHARED; a writer of
// one of those files takes its fence EXCLUSIVE first, so it waits for the
// admission to end, and writers of one fence exclude each other the same
// way." Every participant is a process of its own.
func exclusionRows(c *Config) {
	Describe("Exclusion between processes", func() {
		It("refuses a hold while a guard is held, and a guard while a hold is held", Label("admission:exclusive-shared"), func(ctx SpecContext) {
			d := c.dir()
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			a.expect(ctx, "guard-try "+d, held, "the first guard creates and takes the fence")
			b.expect(ctx, "hold-try "+d, inProgress, "a hold under another process's guard")
			a.expect(ctx, "release", released, "the guard lets go")
			b.expect(ctx, "hold-try "+d, held, "a hold once the guard let go")
			a.expect(ctx, "guard-try "+d, inProgress, "a guard under another process's hold")
			b.expect(ctx, "release", released, "the hold lets go")
			a.expect(ctx, "guard-try "+d, held, "a guard once the hold let go")
		}, SpecTimeout(c.RowTimeout))

		It("lets holds of several processes share a fence", Label("admission:shared-shared"), func(ctx SpecContext) {
			d := c.dir()
			a, b, w := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{}), c.start(ctx, "W", procOpts{})
			a.expect(ctx, "hold-try "+d, "held skipped=1", "a hold where no fence exists yet skips it")
			_, err := os.Lstat(filepath.Join(d, admission.FenceFile))
			Expect(err).To(MatchError(os.ErrNotExist), "a hold never creates a fence")
			a.expect(ctx, "release", released, "the skipping hold lets go")
			w.expect(ctx, "guard-try "+d, held, "a writer creates the fence")
			w.expect(ctx, "release", released, "the writer lets go")
			a.expect(ctx, "hold-try "+d, held, "the first hold")
			b.expect(ctx, "hold-try "+d, held, "a second hold beside the first")
			w.expect(ctx, "guard-try "+d, inProgress, "a guard under two holds")
			a.expect(ctx, "release", released, "the first hold lets go")
			w.expect(ctx, "guard-try "+d, inProgress, "a guard under the remaining hold")
			b.expect(ctx, "release", released, "the second hold lets go")
			w.expect(ctx, "guard-try "+d, held, "a guard once both holds let go")
		}, SpecTimeout(c.RowTimeout))

		It("lets one guard at a time take a fence", Label("admission:exclusive-exclusive"), func(ctx SpecContext) {
			d := c.dir()
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			a.expect(ctx, "guard-try "+d, held, "the first guard")
			b.expect(ctx, "guard-try "+d, inProgress, "a second writer's guard")
			a.expect(ctx, "release", released, "the first guard lets go")
			b.expect(ctx, "guard-try "+d, held, "the second writer once the first let go")
			a.expect(ctx, "guard-try "+d, inProgress, "the first writer again, now under the second")
		}, SpecTimeout(c.RowTimeout))

		// The holder never lets go while the try runs: a try that waited
		// would never answer, and the row would end in its timeout.
		It("answers a try with in progress at once while the holder still holds", Label("admission:try"), func(ctx SpecContext) {
			d := c.dir()
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			a.expect(ctx, "guard-try "+d, held, "the holder")
			b.expect(ctx, "guard-try "+d, inProgress, "TryAcquire of a guard never waits")
			b.expect(ctx, "hold-try "+d, inProgress, "TryAcquire of a hold never waits")
			a.expect(ctx, "release", released, "the holder lets go")
			b.expect(ctx, "hold-try "+d, held, "the hold once the holder let go")
		}, SpecTimeout(c.RowTimeout))

		// No wall time is asserted: the bounded acquire must answer in
		// progress while the holder still holds (one that never gave up
		// would end the row in its timeout), must have waited (it reports
		// "waiting" first), and must take the fence once the holder lets go
		// during a longer bound.
		It("gives up an acquire at its bound while the holder holds, and takes the fence once the holder lets go", Label("admission:bound"), func(ctx SpecContext) {
			d := c.dir()
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			short, long := ms(200*time.Millisecond), ms(c.RowTimeout)
			a.expect(ctx, "guard-try "+d, held, "the holder")
			b.expect(ctx, "guard "+short+" "+d, "waiting", "a bounded guard finds the fence held and waits")
			b.expectNext(ctx, inProgress, "the bounded guard gives up while the holder holds")
			b.expect(ctx, "hold "+short+" "+d, "waiting", "a bounded hold finds the fence held and waits")
			b.expectNext(ctx, inProgress, "the bounded hold gives up while the holder holds")
			b.expect(ctx, "guard "+long+" "+d, "waiting", "a guard with a long bound waits")
			a.expect(ctx, "release", released, "the holder lets go while the guard waits")
			b.expectNext(ctx, held, "the waiting guard takes the fence once the holder let go")
		}, SpecTimeout(c.RowTimeout))
	})
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

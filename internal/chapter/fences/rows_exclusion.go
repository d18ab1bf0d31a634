//go:build linux

package fences

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/conform-spi/conform/admission"
)

// The exclusion rows: a guard excludes guards and holds, holds share, and
// bounded acquires wait at most their bound. Every participant is a process
// of its own.

func rowExclusiveShared(r *rowRun) {
	d := r.dir()
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	a.expect(ObExclusion, "guard-try "+d, held, "the first guard creates and takes the fence")
	b.expect(ObExclusion, "hold-try "+d, inProgress, "a hold under another process's guard")
	a.expect(ObExclusion, "release", released, "the guard lets go")
	b.expect(ObExclusion, "hold-try "+d, held, "a hold once the guard let go")
	a.expect(ObExclusion, "guard-try "+d, inProgress, "a guard under another process's hold")
	b.expect(ObExclusion, "release", released, "the hold lets go")
	a.expect(ObExclusion, "guard-try "+d, held, "a guard once the hold let go")
}

func rowSharedShared(r *rowRun) {
	d := r.dir()
	a, b, w := r.start("A", procOpts{}), r.start("B", procOpts{}), r.start("W", procOpts{})
	a.expect(ObNoCreate, "hold-try "+d, "held skipped=1", "a hold where no fence exists yet skips it")
	_, err := os.Lstat(filepath.Join(d, admission.FenceFile))
	r.check(ObNoCreate, os.IsNotExist(err), "a hold never creates a fence", "no "+admission.FenceFile, existence(err))
	a.expect(ObNoCreate, "release", released, "the skipping hold lets go")
	w.expect(ObExclusion, "guard-try "+d, held, "a writer creates the fence")
	w.expect(ObExclusion, "release", released, "the writer lets go")
	a.expect(ObExclusion, "hold-try "+d, held, "the first hold")
	b.expect(ObExclusion, "hold-try "+d, held, "a second hold beside the first")
	w.expect(ObExclusion, "guard-try "+d, inProgress, "a guard under two holds")
	a.expect(ObExclusion, "release", released, "the first hold lets go")
	w.expect(ObExclusion, "guard-try "+d, inProgress, "a guard under the remaining hold")
	b.expect(ObExclusion, "release", released, "the second hold lets go")
	w.expect(ObExclusion, "guard-try "+d, held, "a guard once both holds let go")
}

func rowExclusiveExclusive(r *rowRun) {
	d := r.dir()
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	a.expect(ObExclusion, "guard-try "+d, held, "the first guard")
	b.expect(ObExclusion, "guard-try "+d, inProgress, "a second writer's guard")
	a.expect(ObExclusion, "release", released, "the first guard lets go")
	b.expect(ObExclusion, "guard-try "+d, held, "the second writer once the first let go")
	a.expect(ObExclusion, "guard-try "+d, inProgress, "the first writer again, now under the second")
}

// rowTry: the holder never lets go while the try runs; a try that waited
// would never answer, and the row would end in its timeout.
func rowTry(r *rowRun) {
	d := r.dir()
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	a.expect(ObExclusion, "guard-try "+d, held, "the holder")
	b.expect(ObBound, "guard-try "+d, inProgress, "a try of a guard never waits")
	b.expect(ObBound, "hold-try "+d, inProgress, "a try of a hold never waits")
	a.expect(ObExclusion, "release", released, "the holder lets go")
	b.expect(ObExclusion, "hold-try "+d, held, "the hold once the holder let go")
}

// rowBound asserts no wall time: the bounded acquire must answer in
// progress while the holder still holds (one that never gave up would end
// the row in its timeout), must have waited (it reports "waiting" first),
// and must take the fence once the holder lets go during a longer bound.
func rowBound(r *rowRun) {
	d := r.dir()
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	short, long := ms(200*time.Millisecond), ms(r.c.RowTimeout)
	a.expect(ObExclusion, "guard-try "+d, held, "the holder")
	b.expect(ObBound, "guard "+short+" "+d, "waiting", "a bounded guard finds the fence held and waits")
	b.expectNext(ObBound, inProgress, "the bounded guard gives up while the holder holds")
	b.expect(ObBound, "hold "+short+" "+d, "waiting", "a bounded hold finds the fence held and waits")
	b.expectNext(ObBound, inProgress, "the bounded hold gives up while the holder holds")
	b.expect(ObBound, "guard "+long+" "+d, "waiting", "a guard with a long bound waits")
	a.expect(ObExclusion, "release", released, "the holder lets go while the guard waits")
	b.expectNext(ObBound, held, "the waiting guard takes the fence once the holder let go")
}

// existence describes the outcome of an lstat for a failure.
func existence(err error) string {
	if err == nil {
		return "the file exists"
	}
	return err.Error()
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

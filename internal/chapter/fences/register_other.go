//go:build !linux

package fences

import (
	"context"

	"github.com/conform-spi/conform/internal/spec"
)

// rowRun is one run of a row; off Linux it only reports the row not
// exercised.
type rowRun struct{ sp *spec.Spec }

// rowBody returns a body that reports the row as not exercised: the rows
// need Linux (/proc, mount namespaces, flock(1)).
func rowBody(string) func(*rowRun) {
	return func(r *rowRun) {
		sp := r.sp
		sp.NothingExercised("the admission chapter runs on Linux only")
	}
}

// ServeHelperIfRequested returns at once: there is no helper off Linux.
func ServeHelperIfRequested() {}

func newRowRun(_ *Config, ctx context.Context, _ RowSpec) *rowRun { return &rowRun{sp: specOf(ctx)} }

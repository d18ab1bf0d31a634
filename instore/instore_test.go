package instore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
)

// The sites' names are the catalogue's and the CLI's (--failpoint
// commit-locked=...); they must not change.
func TestSiteNames(t *testing.T) {
	want := []instore.Site{"commit-locked", "commit-before-point", "commit-after-point"}
	if !slices.Equal(instore.Sites, want) {
		t.Fatalf("Sites = %q, want %q", instore.Sites, want)
	}
	if instore.CommitLocked != want[0] || instore.CommitBeforePoint != want[1] || instore.CommitAfterPoint != want[2] {
		t.Fatalf("the site constants are %q, %q, %q; want %q", instore.CommitLocked, instore.CommitBeforePoint, instore.CommitAfterPoint, want)
	}
}

func TestAtNothingArmed(t *testing.T) {
	if hook.Installed() {
		t.Fatal("a handler is installed in a binary that links no injector")
	}
	for _, s := range instore.Sites {
		if err := instore.At(context.Background(), s, "c1"); err != nil {
			t.Fatalf("At(%s) with nothing armed = %v, want nil", s, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = instore.At(context.Background(), instore.CommitLocked, "c1") }); n != 0 {
		t.Fatalf("At with nothing armed allocates %v times, want 0", n)
	}
}

// At hands the site, the commit id and ctx to the installed handler and
// returns what it returns.
func TestAtCallsTheInstalledHandler(t *testing.T) {
	type call struct {
		site string
		id   hoststore.CommitID
	}
	var calls []call
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "mine")
	crash := errors.Join(instore.ErrCrashed, errors.New("at commit-before-point"))
	hook.Set(func(c context.Context, site string, id hoststore.CommitID) error {
		if c.Value(key{}) != "mine" {
			t.Errorf("the handler got another ctx at %s", site)
		}
		calls = append(calls, call{site, id})
		if instore.Site(site) == instore.CommitBeforePoint {
			return crash
		}
		return nil
	})
	defer hook.Set(nil)

	if err := instore.At(ctx, instore.CommitLocked, "c1"); err != nil {
		t.Fatalf("At(CommitLocked) = %v, want the handler's nil", err)
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, "c1"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("At(CommitBeforePoint) = %v, want the handler's crash", err)
	}
	want := []call{{"commit-locked", "c1"}, {"commit-before-point", "c1"}}
	if !slices.Equal(calls, want) {
		t.Fatalf("the handler saw %v, want %v", calls, want)
	}
	hook.Set(nil)
	if err := instore.At(ctx, instore.CommitBeforePoint, "c2"); err != nil || len(calls) != 2 {
		t.Fatalf("At after the handler was removed = %v with %d calls, want nil and no call", err, len(calls))
	}
}

func BenchmarkAtDisabled(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range instore.Sites {
			if err := instore.At(ctx, s, "c1"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

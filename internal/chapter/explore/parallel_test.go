package explore_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/settings"
)

// gatedRealms makes realms of newRealm whose first realm's first Open
// waits until a second realm has been made: only histories that play at
// once get past it.
type gatedRealms struct {
	newRealm func(context.Context) (hoststore.HostStoreFactory, error)
	mu       sync.Mutex
	made     int
	second   chan struct{}
}

func (g *gatedRealms) NewRealm(ctx context.Context) (hoststore.HostStoreFactory, error) {
	f, err := g.newRealm(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.made++
	switch g.made {
	case 1:
		return &gatedRealm{HostStoreFactory: f, gate: g.second}, nil
	case 2:
		close(g.second)
	}
	return f, nil
}

type gatedRealm struct {
	hoststore.HostStoreFactory
	gate chan struct{}
	once sync.Once
}

func (r *gatedRealm) Open(ctx context.Context) (hoststore.HostStore, error) {
	r.once.Do(func() {
		select {
		case <-r.gate:
		case <-ctx.Done():
		}
	})
	return r.HostStoreFactory.Open(ctx)
}

// TestParallelPlaysTheSameHistories plays one budget one at a time and
// four at a time over the reference store: the same histories, in the
// same order, each judged once with progress in order, and none fails.
// A realm that cannot start until a second one exists shows that four at
// a time did play at once.
func TestParallelPlaysTheSameHistories(t *testing.T) {
	const histories = 40
	var outs [2]explore.Outcome
	for k, parallel := range []int{1, 4} {
		newRealm := referenceRealm
		if parallel > 1 {
			g := &gatedRealms{newRealm: referenceRealm, second: make(chan struct{})}
			newRealm = g.NewRealm
		}
		var seen []int
		cfg := chapter.Config{NewRealm: newRealm, Settings: settings.Settings{Options: settings.Options{Seed: 11, Explore: histories, ExploreParallel: parallel,
			ExploreProgress: func(s chapter.ExploreStatus) { seen = append(seen, s.Histories) }}}}
		out, err := explore.Play(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, hf := range out.Failed {
			t.Errorf("%d at a time: history %d failed on the reference: %v", parallel, hf.Index, hf.Findings)
		}
		want := make([]int, histories)
		for i := range want {
			want[i] = i + 1
		}
		if out.Played != histories || !slices.Equal(seen, want) || out.Stopped {
			t.Fatalf("%d at a time: played %d, progress %v, stopped %v; want %d in order", parallel, out.Played, seen, out.Stopped, histories)
		}
		outs[k] = out
	}
	if !slices.Equal(outs[0].Seeds, outs[1].Seeds) {
		t.Fatalf("one at a time played seeds %v; four at a time %v", outs[0].Seeds, outs[1].Seeds)
	}
}

// TestParallelStopsWhereOneAtATimeStops plays histories over a store
// whose every realm hangs its eighth commit: one at a time and four at a
// time, the run ends at the same history, as a hang, having counted the
// same histories; the histories four at a time started past it are not
// counted.
func TestParallelStopsWhereOneAtATimeStops(t *testing.T) {
	var outs [2]explore.Outcome
	for k, parallel := range []int{1, 4} {
		cfg := chapter.Config{NewRealm: canaryRealm(canary.HangsCommit), Timing: chapter.NewTiming(200 * time.Millisecond),
			Settings: settings.Settings{Options: settings.Options{Seed: 3, Explore: 50, ExploreParallel: parallel}}}
		out, err := explore.Play(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Hung || out.Played == 0 || out.Played == 50 {
			t.Fatalf("%d at a time: hung %v after %d histories; want a hang that ends the run", parallel, out.Hung, out.Played)
		}
		outs[k] = out
	}
	if outs[0].Played != outs[1].Played || !slices.Equal(outs[0].Seeds, outs[1].Seeds) || outs[1].Coverage.Histories != outs[1].Played {
		t.Fatalf("one at a time stopped after %d histories %v; four at a time after %d %v (coverage of %d)",
			outs[0].Played, outs[0].Seeds, outs[1].Played, outs[1].Seeds, outs[1].Coverage.Histories)
	}
}

// TestParallelStopsWithTheRun: a run whose context ends while four
// histories play stops, counting only what it judged before.
func TestParallelStopsWithTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := chapter.Config{NewRealm: referenceRealm, Settings: settings.Settings{Options: settings.Options{Seed: 5, Explore: 1000, ExploreParallel: 4,
		ExploreProgress: func(s chapter.ExploreStatus) {
			if s.Histories == 10 {
				cancel()
			}
		}}}}
	out, err := explore.Play(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Stopped || out.Played != 10 || len(out.Seeds) != 10 {
		t.Fatalf("stopped %v after %d histories (%d seeds), want stopped after 10", out.Stopped, out.Played, len(out.Seeds))
	}
}

package appendonly_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/appendonly"
	"github.com/conform-spi/conform/stores/sqlite/storetest"
)

func newFactory(t testing.TB) hoststore.HostStoreFactory {
	t.Helper()
	f, err := appendonly.NewRealm(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	return f
}

func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: newFactory})
}

func TestOpenURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "realm.db")
	f, err := appendonly.OpenURL(t.Context(), "appendonly+sqlite:"+path)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	if got := f.(*appendonly.Factory).Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	for _, bad := range []string{"appendonly+sqlite:", "sqlite:" + path, "appendonly+sqlite:/a?b", path} {
		if _, err := appendonly.OpenURL(t.Context(), bad); err == nil {
			t.Errorf("OpenURL(%q) succeeded, want an error", bad)
		}
	}
}

func BenchmarkCommitSmall(b *testing.B) { storetest.BenchCommitSmall(b, newFactory) }

func BenchmarkCommitParallel64(b *testing.B) { storetest.BenchCommitParallel(b, newFactory, 64) }

func BenchmarkCommitParallel64Over8Handles(b *testing.B) {
	storetest.BenchCommitParallelHandles(b, newFactory, 64, 8)
}

func TestFenceTimingOption(t *testing.T) {
	timing, err := hoststore.NewFenceTiming(time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f, err := appendonly.NewRealm(t.Context(), t.TempDir(), appendonly.WithFenceTiming(timing))
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if got := s.FenceTiming(); got != timing {
		t.Errorf("FenceTiming() = %s, want %s", got, timing)
	}
	if _, err := s.AcquireFence(t.Context(), hoststore.Exclusive); err != nil {
		t.Fatal(err)
	}
	_, err = s.AcquireFence(t.Context(), hoststore.Exclusive)
	var held *hoststore.HeldError
	if !errors.As(err, &held) || held.Remaining > 3*time.Second || held.Remaining <= 0 {
		t.Errorf("AcquireFence with a live 3 s lease = %v, want Held with 0 < remaining <= 3s", err)
	}
	for _, bad := range []appendonly.Option{appendonly.WithFenceTiming(hoststore.FenceTiming{}), appendonly.WithBusyTimeout(0)} {
		if _, err := appendonly.NewRealm(t.Context(), t.TempDir(), bad); err == nil {
			t.Errorf("NewRealm with a bad option succeeded")
		}
	}
}

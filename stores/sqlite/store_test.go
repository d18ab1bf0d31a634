package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/sqlite"
	"github.com/conform-spi/conform/stores/sqlite/storetest"
)

func newFactory(t testing.TB) hoststore.HostStoreFactory {
	t.Helper()
	f, err := sqlite.NewRealm(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	return f
}

func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: newFactory, RefusesAtCommit: true, RefusesDeletedName: true})
}

func TestOpenURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "realm.db")
	f, err := sqlite.OpenURL(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	if got := f.(*sqlite.Factory).Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	for _, bad := range []string{"sqlite:", "postgres://x", "sqlite:/a?b", path} {
		if _, err := sqlite.OpenURL(t.Context(), bad); err == nil {
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
	f, err := sqlite.NewRealm(t.Context(), t.TempDir(), sqlite.WithFenceTiming(timing))
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
	for _, bad := range []sqlite.Option{sqlite.WithFenceTiming(hoststore.FenceTiming{}), sqlite.WithBusyTimeout(0)} {
		if _, err := sqlite.NewRealm(t.Context(), t.TempDir(), bad); err == nil {
			t.Errorf("NewRealm with a bad option succeeded")
		}
	}
}

package admission_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/admission"
)

// benchFence is a fence that already exists, as it does after a realm's
// first write.
func benchFence(b *testing.B) admission.Fence {
	b.Helper()
	f := admission.DocumentFence(filepath.Join(b.TempDir(), "doc.json"))
	g, err := admission.Install{}.TryAcquireGuard(f)
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Release(); err != nil {
		b.Fatal(err)
	}
	return f
}

func BenchmarkGuardAcquireRelease(b *testing.B) {
	f := benchFence(b)
	b.ReportAllocs()
	for b.Loop() {
		g, err := admission.Install{}.AcquireGuard(time.Second, f)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardTryAcquireRelease(b *testing.B) {
	f := benchFence(b)
	b.ReportAllocs()
	for b.Loop() {
		g, err := admission.Install{}.TryAcquireGuard(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHoldAcquireRelease(b *testing.B) {
	f := benchFence(b)
	b.ReportAllocs()
	for b.Loop() {
		h, err := admission.Install{}.AcquireHold(time.Second, f)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHoldChainAcquireRelease(b *testing.B) {
	root := b.TempDir()
	l := admission.Layout{UserRoot: filepath.Join(root, "u"), CredentialRoot: filepath.Join(root, "c"), StateRoot: filepath.Join(root, "s")}
	chain, err := l.RealmChain("root", "mid", "head")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range chain {
		if err := os.MkdirAll(f.Dir(), 0o755); err != nil {
			b.Fatal(err)
		}
		g, err := admission.Install{}.TryAcquireGuard(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Release(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := admission.Install{}.AcquireHold(time.Second, chain...)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

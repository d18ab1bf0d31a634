package hoststore_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

const (
	ns  = time.Nanosecond
	sec = time.Second
)

// noMargin marks a row that calls NewFenceTiming (margin = one renew interval).
const noMargin time.Duration = math.MinInt64

// Distinctive substrings, one per bound of the table in
// docs/host-store-contract.md#fence-timing.
const (
	boundRenewMin  = "renew interval"
	boundLeaseMin  = "below 3 renew intervals"
	boundLeaseMax  = "is above the maximum 1h0m0s"
	boundMarginMin = "self-fence margin"
	boundWindowMin = "self-fence window"
)

func TestFenceTimingBounds(t *testing.T) {
	tests := []struct {
		name                 string
		renew, lease, margin time.Duration
		wantErr              string
	}{
		{"defaults", 10 * sec, 30 * sec, noMargin, ""},
		{"renew of exactly 1s", sec, 3 * sec, noMargin, ""},
		{"renew of 999ms", 999 * time.Millisecond, 3 * sec, noMargin, "renew interval 999ms is below the minimum 1s"},
		{"renew of 1s-1ns", sec - ns, 3 * sec, noMargin, boundRenewMin},
		{"renew of zero", 0, 3 * sec, noMargin, boundRenewMin},
		{"negative renew", -sec, 3 * sec, noMargin, boundRenewMin},
		{"lease of exactly 3 renews", 10 * sec, 30 * sec, noMargin, ""},
		{"lease of 3 renews-1ns", 10 * sec, 30*sec - ns, noMargin, boundLeaseMin},
		{"lease of 3 renews-1ns at the 1s renew", sec, 3*sec - ns, noMargin, boundLeaseMin},
		{"lease of zero", sec, 0, noMargin, boundLeaseMin},
		{"negative lease", sec, -sec, noMargin, boundLeaseMin},
		{"lease of exactly 1h", 10 * sec, time.Hour, noMargin, ""},
		{"lease of 1h+1ns", 10 * sec, time.Hour + ns, noMargin, "lease 1h0m0.000000001s " + boundLeaseMax},
		{"lease of 1h with the longest renew (20m)", 20 * time.Minute, time.Hour, noMargin, ""},
		{"lease of 1h with renew 20m+1ns", 20*time.Minute + ns, time.Hour, noMargin, boundLeaseMin},
		{"renew longer than the lease", time.Hour, time.Hour, noMargin, boundLeaseMin},
		// 3*renew and 2*renew wrap around int64 for these; the bound must hold anyway.
		{"renew of 2^62 (3 renews overflow)", 1 << 62, 30 * sec, noMargin, boundLeaseMin},
		{"renew of MaxInt64", math.MaxInt64, time.Hour, noMargin, boundLeaseMin},
		{"renew of MaxInt64/3+1", math.MaxInt64/3 + 1, time.Hour, noMargin, boundLeaseMin},
		{"margin of exactly one renew", 10 * sec, 40 * sec, 10 * sec, ""},
		{"margin of one renew-1ns", 10 * sec, 40 * sec, 10*sec - ns, "self-fence margin 9.999999999s is below one renew interval 10s"},
		{"margin of zero", 10 * sec, 40 * sec, 0, boundMarginMin},
		{"negative margin", 10 * sec, 40 * sec, -sec, boundMarginMin},
		{"window of exactly 2 renews", 10 * sec, 40 * sec, 20 * sec, ""},
		{"window of 2 renews-1ns", 10 * sec, 40 * sec, 20*sec + ns, "self-fence window 19.999999999s (lease 40s minus margin 20.000000001s) is below two renew intervals of 10s"},
		{"window of 2 renews at the minimum lease", 10 * sec, 30 * sec, 10 * sec, ""},
		{"margin larger than the lease", 10 * sec, 40 * sec, 50 * sec, boundWindowMin},
		{"margin of MaxInt64", sec, time.Hour, math.MaxInt64, boundWindowMin},
		{"margin for a store with visibility lag", 10 * sec, 60 * sec, 16 * sec, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				ft         hoststore.FenceTiming
				err        error
				wantMargin = tc.margin
			)
			if tc.margin == noMargin {
				ft, err = hoststore.NewFenceTiming(tc.renew, tc.lease)
				wantMargin = tc.renew
			} else {
				ft, err = hoststore.NewFenceTimingWithMargin(tc.renew, tc.lease, tc.margin)
			}
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("accepted %s, want an error containing %q", ft, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "fence timing: ") {
					t.Fatalf("error %q, want it to start with \"fence timing: \" and contain %q", err, tc.wantErr)
				}
				if ft != (hoststore.FenceTiming{}) || ft.Valid() {
					t.Fatalf("refused with %q but answered %s, want the zero value", err, ft)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %q, want the timing accepted", err)
			}
			checkTiming(t, ft, tc.renew, tc.lease, wantMargin, hoststore.FenceMaxCommitLatency)
		})
	}
}

func checkTiming(t *testing.T, ft hoststore.FenceTiming, renew, lease, margin, maxCommit time.Duration) {
	t.Helper()
	got := [5]time.Duration{ft.RenewInterval(), ft.Lease(), ft.SelfFenceMargin(), ft.SelfFenceWindow(), ft.MaxCommitLatency()}
	want := [5]time.Duration{renew, lease, margin, lease - margin, maxCommit}
	if got != want {
		t.Fatalf("renew, lease, margin, window, longest commit = %v, want %v", got, want)
	}
	if !ft.Valid() {
		t.Fatalf("Valid() = false for %s, want true", ft)
	}
}

func TestDefaultFenceTiming(t *testing.T) {
	ft := hoststore.DefaultFenceTiming()
	checkTiming(t, ft, 10*sec, 30*sec, 10*sec, 2*sec)
	if ft.SelfFenceWindow() != 20*sec {
		t.Fatalf("SelfFenceWindow() = %s, want 20s", ft.SelfFenceWindow())
	}
	built, err := hoststore.NewFenceTiming(hoststore.FenceRenewInterval, hoststore.FenceLease)
	if err != nil || built != ft {
		t.Fatalf("NewFenceTiming(defaults) = %s, %v, want %s, nil", built, err, ft)
	}
	if want := "renew 10s, lease 30s, margin 10s, longest commit 2s"; ft.String() != want {
		t.Fatalf("String() = %q, want %q", ft.String(), want)
	}
	if (hoststore.FenceTiming{}).Valid() {
		t.Fatal("the zero FenceTiming is Valid(), want not")
	}
}

func TestWithMaxCommitLatency(t *testing.T) {
	base, err := hoststore.NewFenceTimingWithMargin(10*sec, 40*sec, 15*sec)
	if err != nil {
		t.Fatalf("NewFenceTimingWithMargin = %q, want it accepted", err)
	}
	tests := []struct {
		name    string
		d       time.Duration
		wantErr string
	}{
		{"zero", 0, "longest commit 0s is not longer than zero"},
		{"negative", -ns, "not longer than zero"},
		{"1ns", ns, ""},
		{"below the default", sec, ""},
		{"above the default", 5 * sec, ""},
		{"exactly the lease", 40 * sec, ""},
		{"lease+1ns", 40*sec + ns, "longest commit 40.000000001s is above the lease 40s"},
		{"MaxInt64", math.MaxInt64, "is above the lease"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ft, err := base.WithMaxCommitLatency(tc.d)
			if tc.wantErr != "" {
				checkErr(t, "WithMaxCommitLatency", err, tc.wantErr)
				if ft.Valid() {
					t.Fatalf("refused but answered %s, want the zero value", ft)
				}
			} else {
				if err != nil {
					t.Fatalf("WithMaxCommitLatency(%s) = %q, want it accepted", tc.d, err)
				}
				checkTiming(t, ft, 10*sec, 40*sec, 15*sec, tc.d)
			}
			checkTiming(t, base, 10*sec, 40*sec, 15*sec, hoststore.FenceMaxCommitLatency)
		})
	}
	if _, err := (hoststore.FenceTiming{}).WithMaxCommitLatency(ns); err == nil {
		t.Fatal("the zero FenceTiming accepted a longest commit, want it refused (its lease is zero)")
	}
}

func TestFenceTimingConstants(t *testing.T) {
	got := []time.Duration{hoststore.FenceRenewInterval, hoststore.FenceLease, hoststore.MinRenewInterval, hoststore.MaxLease, hoststore.FenceMaxCommitLatency}
	want := []time.Duration{10 * sec, 30 * sec, sec, time.Hour, 2 * sec}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("constant %d = %s, want %s (docs/host-store-contract.md#fence-timing)", i, got[i], want[i])
		}
	}
	if hoststore.FenceMinLeaseRenewals != 3 {
		t.Errorf("FenceMinLeaseRenewals = %d, want 3", hoststore.FenceMinLeaseRenewals)
	}
}

package reference

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

var bg = context.Background()

// TestTokensIncreaseAcrossHandles: tokens start at 1 and strictly increase
// across every handle of the realm, whatever the mode.
func TestTokensIncreaseAcrossHandles(t *testing.T) {
	f := NewFactory()
	var last hoststore.FenceToken
	for i := 0; i < 6; i++ {
		s := openStore(t, f)
		mode := hoststore.Exclusive
		if i%2 == 1 {
			mode = hoststore.Takeover
		} else if err := f.LapseFenceLeases(bg); err != nil {
			t.Fatal(err)
		}
		g, err := s.AcquireFence(bg, mode)
		if err != nil {
			t.Fatalf("acquire %d (%s): %v", i, mode, err)
		}
		if g.Token != last+1 {
			t.Fatalf("acquire %d answered token %d, want %d", i, g.Token, last+1)
		}
		last = g.Token
	}
}

// TestExclusiveAcquire: an empty realm's first acquire supersedes nothing;
// a live holder makes an exclusive acquire Held with the holder's token and
// what remains of its lease, by the store's clock; once the lease lapsed it
// succeeds.
func TestExclusiveAcquire(t *testing.T) {
	f := NewFactory()
	a, b := openStore(t, f), openStore(t, f)
	g, err := a.AcquireFence(bg, hoststore.Exclusive)
	if err != nil || g.Token != 1 || g.SupersededLease != 0 {
		t.Fatalf("first acquire = %+v, %v; want token 1, no superseded lease", g, err)
	}
	f.Clock().Advance(10 * time.Second)
	_, err = b.AcquireFence(bg, hoststore.Exclusive)
	var held *hoststore.HeldError
	if !errors.As(err, &held) || held.Holder != 1 || held.Remaining != 20*time.Second {
		t.Fatalf("acquire with a live holder = %v, want Held{1, 20s}", err)
	}
	f.Clock().Advance(20*time.Second - time.Nanosecond)
	if _, err := b.AcquireFence(bg, hoststore.Exclusive); hoststore.KindOf(err) != hoststore.ErrKindHeld {
		t.Fatalf("acquire 1ns before the lease ends = %v, want Held", err)
	}
	f.Clock().Advance(time.Nanosecond)
	g, err = b.AcquireFence(bg, hoststore.Exclusive)
	if err != nil || g.Token != 2 || g.SupersededLease != 0 {
		t.Fatalf("acquire as the lease ends = %+v, %v; want token 2", g, err)
	}
}

// TestTakeover: a takeover always issues a token, and reports the live
// holder's remaining lease, zero when none is live.
func TestTakeover(t *testing.T) {
	timing, err := hoststore.NewFenceTiming(2*time.Second, 9*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactory(WithTiming(timing))
	s := openStore(t, f)
	if s.FenceTiming() != timing {
		t.Fatalf("FenceTiming = %s, want %s", s.FenceTiming(), timing)
	}
	cases := []struct {
		name    string
		before  func()
		want    hoststore.FenceToken
		remains time.Duration
	}{
		{"on an empty realm", func() {}, 1, 0},
		{"of a live holder", func() { f.Clock().Advance(4 * time.Second) }, 2, 5 * time.Second},
		{"of a lapsed holder", func() { _ = f.LapseFenceLeases(bg) }, 3, 0},
		{"right after an acquire", func() {}, 4, 9 * time.Second},
	}
	for _, tc := range cases {
		tc.before()
		g, err := s.AcquireFence(bg, hoststore.Takeover)
		if err != nil || g.Token != tc.want || g.SupersededLease != tc.remains {
			t.Fatalf("takeover %s = %+v, %v; want token %d superseding %s", tc.name, g, err, tc.want, tc.remains)
		}
	}
	if _, err := s.AcquireFence(bg, hoststore.AcquireMode(7)); hoststore.KindOf(err) != hoststore.ErrKindInvalid {
		t.Fatalf("acquire with an unknown mode = %v, want Invalid", err)
	}
}

// TestRenew: the current token renews, also after its lease lapsed, and
// the renew starts a new lease; a superseded token is FencedOut with the
// current one; a token never issued is Invalid.
func TestRenew(t *testing.T) {
	f := NewFactory()
	a, b := openStore(t, f), openStore(t, f)
	g1, _ := a.AcquireFence(bg, hoststore.Exclusive)
	if err := f.LapseFenceLeases(bg); err != nil {
		t.Fatal(err)
	}
	if err := a.RenewFence(bg, g1.Token); err != nil {
		t.Fatalf("renew after the lease lapsed = %v, want nil", err)
	}
	f.Clock().Advance(5 * time.Second)
	var held *hoststore.HeldError
	if _, err := b.AcquireFence(bg, hoststore.Exclusive); !errors.As(err, &held) || held.Remaining != 25*time.Second {
		t.Fatalf("acquire after a renew = %v, want Held with 25s: the renew starts a new lease", err)
	}
	g2, _ := b.AcquireFence(bg, hoststore.Takeover)
	cases := []struct {
		name  string
		token hoststore.FenceToken
		kind  hoststore.ErrorKind
	}{
		{"superseded", g1.Token, hoststore.ErrKindFencedOut},
		{"current", g2.Token, hoststore.ErrKindNone},
		{"zero", 0, hoststore.ErrKindInvalid},
		{"never issued", g2.Token + 1, hoststore.ErrKindInvalid},
	}
	for _, tc := range cases {
		err := a.RenewFence(bg, tc.token)
		wantKind(t, "renew "+tc.name, err, tc.kind)
		var fo *hoststore.FencedOutError
		if errors.As(err, &fo) && fo.Current != g2.Token {
			t.Fatalf("renew %s = %v, want current %d", tc.name, err, g2.Token)
		}
	}
}

// TestLapseFenceLeases ends exactly the recorded lease, and does nothing
// when no lease is live.
func TestLapseFenceLeases(t *testing.T) {
	f := NewFactory()
	start := f.Clock().Now()
	if err := f.LapseFenceLeases(bg); err != nil || !f.Clock().Now().Equal(start) {
		t.Fatalf("lapse on an empty realm moved the clock to %s (%v)", f.Clock().Now(), err)
	}
	s := openStore(t, f)
	if _, err := s.AcquireFence(bg, hoststore.Exclusive); err != nil {
		t.Fatal(err)
	}
	if err := f.LapseFenceLeases(bg); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Clock().Now().Sub(start), hoststore.FenceLease+time.Nanosecond; got != want {
		t.Fatalf("lapse moved the clock by %s, want %s", got, want)
	}
	if g, err := s.AcquireFence(bg, hoststore.Takeover); err != nil || g.SupersededLease != 0 {
		t.Fatalf("takeover after a lapse = %+v, %v; want nothing superseded", g, err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := f.LapseFenceLeases(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("lapse with an ended context = %v", err)
	}
}

// TestClock: a clock starts at a fixed instant, moves only by Advance and
// refuses to go back.
func TestClock(t *testing.T) {
	a, b := NewClock(), NewClock()
	if !a.Now().Equal(b.Now()) || a.Now().Year() != 2025 {
		t.Fatalf("clocks start at %s and %s, want one fixed instant", a.Now(), b.Now())
	}
	a.Advance(time.Minute)
	if a.Now().Sub(b.Now()) != time.Minute {
		t.Fatalf("Advance moved the clock by %s", a.Now().Sub(b.Now()))
	}
	defer func() {
		if recover() == nil {
			t.Fatalf("a negative Advance did not panic")
		}
	}()
	a.Advance(-time.Second)
}

// TestFactoryOptions: WithClock shares a clock between realms; a timing
// that is not valid is refused.
func TestFactoryOptions(t *testing.T) {
	c := NewClock()
	f1, f2 := NewFactory(WithClock(c)), NewFactory(WithClock(c))
	if f1.Clock() != c || f2.Clock() != c {
		t.Fatalf("WithClock did not set the realm's clock")
	}
	s1, s2 := openStore(t, f1), openStore(t, f2)
	if _, err := s1.AcquireFence(bg, hoststore.Exclusive); err != nil {
		t.Fatal(err)
	}
	if g, err := s2.AcquireFence(bg, hoststore.Exclusive); err != nil || g.Token != 1 {
		t.Fatalf("a second realm's first acquire = %+v, %v: realms share a fence", g, err)
	}
	if err := f1.LapseFenceLeases(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.AcquireFence(bg, hoststore.Exclusive); err != nil {
		t.Fatalf("after lapsing through a shared clock, the other realm's lease is live: %v", err)
	}
	if s1.FenceTiming() != hoststore.DefaultFenceTiming() {
		t.Fatalf("default FenceTiming = %s", s1.FenceTiming())
	}
	defer func() {
		if recover() == nil {
			t.Fatalf("NewFactory accepted the zero FenceTiming")
		}
	}()
	NewFactory(WithTiming(hoststore.FenceTiming{}))
}

package storetest

import (
	"errors"

	"github.com/conform-spi/conform/hoststore"
)

func testAcquireEmpty(e *env) {
	s := e.open()
	g, err := s.AcquireFence(e.ctx, hoststore.Exclusive)
	if err != nil {
		e.Fatalf("AcquireFence(Exclusive) on an empty realm: %v", err)
	}
	if g.Token < 1 || g.SupersededLease != 0 {
		e.Errorf("AcquireFence(Exclusive) on an empty realm = %+v, want a token >= 1 and no superseded lease", g)
	}
}

func testAcquireHeld(e *env) {
	w, tok := e.writer()
	lease := w.FenceTiming().Lease()
	q := e.open()
	_, err := q.AcquireFence(e.ctx, hoststore.Exclusive)
	var held *hoststore.HeldError
	if !errors.As(err, &held) {
		e.Fatalf("AcquireFence(Exclusive) with a live holder = %v, want Held", err)
	}
	if held.Holder != tok || held.Remaining <= 0 || held.Remaining > lease {
		e.Errorf("Held = %+v, want holder %d and 0 < remaining <= %s", held, tok, lease)
	}
	g, err := q.AcquireFence(e.ctx, hoststore.Takeover)
	if err != nil {
		e.Fatalf("AcquireFence(Takeover): %v", err)
	}
	if g.Token <= tok || g.SupersededLease <= 0 || g.SupersededLease > lease {
		e.Errorf("AcquireFence(Takeover) = %+v, want a token above %d and 0 < superseded <= %s", g, tok, lease)
	}
	e.lapse()
	r := e.open()
	g2, err := r.AcquireFence(e.ctx, hoststore.Exclusive)
	if err != nil {
		e.Fatalf("AcquireFence(Exclusive) after LapseFenceLeases: %v", err)
	}
	if g2.Token <= g.Token || g2.SupersededLease != 0 {
		e.Errorf("AcquireFence(Exclusive) after a lapse = %+v, want a token above %d and no superseded lease", g2, g.Token)
	}
	e.lapse()
	g3, err := q.AcquireFence(e.ctx, hoststore.Takeover)
	if err != nil {
		e.Fatalf("AcquireFence(Takeover) with no live holder: %v", err)
	}
	if g3.Token <= g2.Token || g3.SupersededLease != 0 {
		e.Errorf("AcquireFence(Takeover) with no live holder = %+v, want a token above %d and no superseded lease", g3, g2.Token)
	}
}

func testRenew(e *env) {
	w, tok := e.writer()
	if err := w.RenewFence(e.ctx, tok); err != nil {
		e.Errorf("RenewFence(current %d): %v", tok, err)
	}
	e.lapse()
	if err := w.RenewFence(e.ctx, tok); err != nil {
		e.Errorf("RenewFence(current %d) after its lease lapsed: %v", tok, err)
	}
	q := e.open()
	if _, err := q.AcquireFence(e.ctx, hoststore.Exclusive); kindOf(err) != hoststore.ErrKindHeld {
		e.Errorf("AcquireFence(Exclusive) after the holder renewed = %v, want Held", err)
	}
	for _, bogus := range []hoststore.FenceToken{0, tok + 1, tok + 1000} {
		if err := q.RenewFence(e.ctx, bogus); kindOf(err) != hoststore.ErrKindInvalid {
			e.Errorf("RenewFence(%d), never issued = %v, want Invalid", bogus, err)
		}
	}
	g, err := q.AcquireFence(e.ctx, hoststore.Takeover)
	if err != nil {
		e.Fatalf("AcquireFence(Takeover): %v", err)
	}
	err = w.RenewFence(e.ctx, tok)
	var fo *hoststore.FencedOutError
	if !errors.As(err, &fo) || fo.Current != g.Token {
		e.Errorf("RenewFence(superseded %d) = %v, want FencedOut{Current: %d}", tok, err, g.Token)
	}
	if err := q.RenewFence(e.ctx, g.Token); err != nil {
		e.Errorf("RenewFence(new holder %d): %v", g.Token, err)
	}
}

func testTokenNeverIssued(e *env) {
	w, tok := e.writer()
	a := scope(hoststore.KindSession, "a")
	for _, bogus := range []hoststore.FenceToken{0, tok + 1} {
		err := w.Commit(e.ctx, e.batch(e.id("bogus"), bogus, create(a, "h")))
		if kindOf(err) != hoststore.ErrKindInvalid {
			e.Errorf("Commit with token %d, never issued = %v, want Invalid", bogus, err)
		}
	}
	e.wantHead(w, a, nil)
}

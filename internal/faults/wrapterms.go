package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// WrapSite is a named point of the wrapper where terms from the CLI act on
// a commit. Unlike an instore.Site, no store calls it: every wrapper Store
// consults its injector's terms there around each commit.
type WrapSite string

// The wrapper sites.
const (
	// WrapCommitBeforeSend acts before the commit is sent to the store:
	// return "kill", "unavailable" or "indeterminate" (nothing was sent in
	// each case); sleep delays the send.
	WrapCommitBeforeSend WrapSite = "wrap/commit-before-send"
	// WrapCommitAfterAnswer acts after the store answered the commit:
	// return "kill" (the answer is lost with the process) or
	// "indeterminate" (the answer is lost, the handle lives); sleep
	// delays the answer.
	WrapCommitAfterAnswer WrapSite = "wrap/commit-after-answer"
)

// WrapSites lists the wrapper sites in the order a commit passes them.
var WrapSites = []WrapSite{WrapCommitBeforeSend, WrapCommitAfterAnswer}

// Failpath is the site's failpath: its armed terms live in
// pingcap/failpoint's registry under it.
func (s WrapSite) Failpath() string { return FailpathPrefix + string(s) }

// wrapReturns lists, per wrapper site, the effects its terms may return,
// each by its name (Effect.String): return("kill") is EffectKill.
var wrapReturns = map[WrapSite][]Effect{
	WrapCommitBeforeSend:  {EffectKill, EffectUnavailable, EffectIndeterminate},
	WrapCommitAfterAnswer: {EffectKill, EffectIndeterminate},
}

// effect returns the effect a return value names at s.
func (s WrapSite) effect(v any) (Effect, bool) {
	for _, e := range wrapReturns[s] {
		if v == e.String() {
			return e, true
		}
	}
	return 0, false
}

// ArmWrapTerms arms a wrapper site with terms, replacing terms armed there
// before (with fresh counts). It acts on every commit of a wrapper Store
// whose injector is i (see Store). It refuses an unknown site, terms ValidateTerms refuses, and
// return values the site does not take (see WrapCommitBeforeSend and
// WrapCommitAfterAnswer).
func (i *Injector) ArmWrapTerms(site WrapSite, terms string) error {
	chain, lib, err := parseWrapTerms(site, terms)
	if err != nil {
		return err
	}
	i.wrapReg.Lock()
	defer i.wrapReg.Unlock()
	ts, err := armTermSet(site.Failpath(), terms, chain, lib)
	if err != nil {
		return err
	}
	if old := i.wrapReg.terms[site]; old != nil {
		old.disarm()
	} else {
		i.wrapArmed.Add(1)
		armedAll.Add(1)
	}
	i.wrapReg.terms[site] = ts
	return nil
}

// DisarmWrapTerms removes the terms armed at a wrapper site; it does nothing
// when none are.
func (i *Injector) DisarmWrapTerms(site WrapSite) {
	i.wrapReg.Lock()
	defer i.wrapReg.Unlock()
	ts := i.wrapReg.terms[site]
	if ts == nil {
		return
	}
	delete(i.wrapReg.terms, site)
	ts.disarm()
	i.wrapArmed.Add(-1)
	armedAll.Add(-1)
}

// parseWrapTerms parses terms and checks their return values for site.
func parseWrapTerms(site WrapSite, terms string) ([]termAct, string, error) {
	effects, ok := wrapReturns[site]
	if !ok {
		return nil, "", fmt.Errorf("failpoint %q: unknown wrapper site; the sites are %v", site, WrapSites)
	}
	chain, lib, err := parseTerms(terms)
	if err != nil {
		return nil, "", fmt.Errorf("failpoint %s: %w", site, err)
	}
	takes := func(v any) bool { _, ok := site.effect(v); return ok }
	names := make([]string, len(effects))
	for i, e := range effects {
		names[i] = strconv.Quote(e.String())
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if err := checkReturns(chain, takes, want); err != nil {
		return nil, "", fmt.Errorf("failpoint %s: terms %q: %w", site, terms, err)
	}
	return chain, lib, nil
}

// wrapTerms evaluates the terms armed at site in the injector once: the effect of a return
// term that fired, if any. A sleep term sleeps here and returns ctx.Err()
// when ctx ends first.
func (i *Injector) wrapTerms(ctx context.Context, site WrapSite) (Effect, bool, error) {
	if i.wrapArmed.Load() == 0 {
		return 0, false, nil
	}
	i.wrapReg.Lock()
	ts := i.wrapReg.terms[site]
	i.wrapReg.Unlock()
	if ts == nil {
		return 0, false, nil
	}
	t := ts.next()
	if t == nil {
		return 0, false, nil
	}
	switch t.kind {
	case actSleep:
		return 0, false, i.sleepCtx(ctx, t.sleep)
	case actReturn:
		e, _ := site.effect(t.ret) // checked when armed
		return e, true, nil
	}
	return 0, false, nil
}

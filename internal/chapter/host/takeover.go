package host

import (
	"context"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowTakeover is row 5: "The old writer's in-flight commit shows wholly or
// never, the same to every load."
func rowTakeover() *chapter.Row {
	r := &chapter.Row{
		ID:          "takeover",
		Name:        "Takeover with a commit in flight",
		Obligations: []reports.ObligationID{chapter.ObFencing, chapter.ObAllOrNothing, chapter.ObDurable},
	}
	r.Specs = func(re *chapter.Specs) {
		for _, site := range instore.Sites {
			site := site
			it(re, fmt.Sprintf("shows the old writer's commit held at %s wholly or never, the same to every load, also after it is released", site), r.Obligations, func(ctx context.Context, e *env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held in flight there", site))
				}
				e.takeoverAt(ctx, site)
			})
		}
	}
	return r
}

type grantResult struct {
	g   hoststore.FenceGrant
	err error
}

func (e *env) takeoverAt(ctx context.Context, site instore.Site) {
	old, b := e.killSetup(ctx, "takeover-"+string(site))
	h, res := e.holdCommit(ctx, old, b, site)
	e.Note("the old writer's commit is held at %s; a new process takes over", site)
	cur := e.MustOpen(ctx)
	acq := make(chan grantResult, 1)
	go func() {
		g, err := cur.Acquire(ctx, hoststore.Takeover)
		acq <- grantResult{g, err}
	}()
	var (
		gr            grantResult
		acquiredFirst bool
	)
	select {
	case gr = <-acq:
		acquiredFirst = true
	case <-time.After(e.Cfg.Settings.SettleBound()):
		e.Note("the takeover waits for the commit in flight (allowed); releasing the commit")
	case <-ctx.Done():
	}
	if acquiredFirst && gr.err == nil {
		e.SetWriter(cur)
	}
	if acquiredFirst && gr.err == nil && site != instore.CommitAfterPoint {
		e.Note("the acquire came before the held batch's commit point: no load may show it, now or later")
		for _, p := range []*chapter.Proc{cur, e.MustOpen(ctx)} {
			shows, hides := e.Shows(ctx, p, b)
			switch {
			case len(shows) > 0 && len(hides) > 0:
				h.Release()
				e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("batch %q, held at %s, shows to %s in some scopes and not in others", b.CommitID(), site, p.Name()),
					"the batch in no scope before its commit point", fmt.Sprintf("shows in %v; not in %v", shows, hides))
			case len(shows) > 0:
				h.Release()
				e.Fail(chapter.ObFencing, fmt.Sprintf("batch %q (token %d), held at %s, is visible to %s after token %d was acquired", b.CommitID(), old.Token, site, p.Name(), cur.Token),
					"never visible: its commit point comes after the acquire", fmt.Sprintf("shows in %v", shows))
			}
		}
	}
	if acquiredFirst && gr.err == nil && site == instore.CommitAfterPoint {
		e.Note("the commit point came before the acquire: a load after the acquire shows the batch, even while its commit is still held")
		if shows, hides := e.Shows(ctx, cur, b); len(hides) > 0 {
			e.Fail(chapter.ObFencing, fmt.Sprintf("batch %q passed its commit point before the takeover, yet a load after the acquire does not show it", b.CommitID()),
				"the batch in every scope", fmt.Sprintf("shows in %v; not in %v", shows, hides))
		}
	}
	h.Release()
	commitErr := <-res
	if !acquiredFirst {
		select {
		case gr = <-acq:
		case <-ctx.Done():
			e.Fail(chapter.ObFenceLease, "the takeover never answered, even after the commit it may wait for was released", "a token", "a hang")
		}
	}
	if gr.err != nil {
		e.Fail(chapter.ObFenceLease, "a takeover failed", "a token", chapter.ErrText(gr.err))
	}
	e.SetWriter(cur)
	e.Note("commit answered %s; acquire answered first: %v", chapter.OkOr(commitErr), acquiredFirst)

	r := e.MustOpen(ctx)
	e.CheckBefore(ctx, r, b)
	procs := []*chapter.Proc{cur, old, r}
	var verdict *bool
	for _, p := range procs {
		if p.Dead() {
			continue
		}
		shows, hides := e.Shows(ctx, p, b)
		if len(shows) > 0 && len(hides) > 0 {
			e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("the in-flight batch %q shows to %s in some scopes and not in others", b.CommitID(), p.Name()),
				"the batch in every scope or in none", fmt.Sprintf("shows in %v; not in %v", shows, hides))
		}
		v := len(shows) > 0
		if verdict == nil {
			verdict = &v
		} else if *verdict != v {
			e.Fail(chapter.ObFencing, fmt.Sprintf("loads disagree on the in-flight batch %q: %s sees it %s", b.CommitID(), p.Name(), shownWord(v)),
				"the same outcome for every load from every handle", fmt.Sprintf("%s to an earlier load, %s to %s", shownWord(!v), shownWord(v), p.Name()))
		}
	}
	visible := verdict != nil && *verdict
	switch {
	case acquiredFirst && site != instore.CommitAfterPoint && visible:
		e.Fail(chapter.ObFencing, fmt.Sprintf("the takeover (token %d) was acquired while batch %q (token %d) was held before its commit point, yet the batch became visible", cur.Token, b.CommitID(), old.Token),
			"never visible: its commit point came after the acquire", "visible")
	case (acquiredFirst && site == instore.CommitAfterPoint) && !visible:
		e.Fail(chapter.ObFencing, fmt.Sprintf("batch %q passed its commit point before the takeover but is not visible after it", b.CommitID()), "visible", "not visible")
	case commitErr != nil && visible && site != instore.CommitAfterPoint && hoststore.KindOf(commitErr) != hoststore.ErrKindIndeterminate && !chapter.IsHarnessErr(commitErr):
		e.Fail(chapter.ObErrors, fmt.Sprintf("the commit answered %s, which says nothing was applied, yet the batch is visible", hoststore.KindOf(commitErr)), "not visible, or an Ok/Indeterminate answer", "visible")
	}
	if visible {
		e.Landed(b)
	}
	e.Note("the outcome holds after another commit and another process")
	e.killContinue(ctx, cur, b.Scopes())
	r2 := e.MustOpen(ctx)
	e.CheckScopes(ctx, r2, chapter.ObFencing, b.Scopes()...)
	r2.Kill()
	r.Kill()
	old.Kill()
}

func shownWord(v bool) string {
	if v {
		return "visible"
	}
	return "not visible"
}

package canary

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/conform-spi/conform/hoststore"
)

// LoadHead returns the scope's visible head, or nil, nil when the scope does
// not exist (never created, or deleted).
func (s *Store) LoadHead(ctx context.Context, ref hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if s.r.bugs.Has(EmptyOnEndedContext) && ctx.Err() != nil {
		return nil, nil
	}
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := ref.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: err.Error()}
	}
	if s.r.bugs.Has(Hangs) && strings.HasPrefix(string(ref.Name), "stale-fence/") {
		select {} // the bug: block forever, whatever the caller's context says
	}
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	sc := r.scopes[r.key(ref)]
	if !sc.live() {
		return nil, nil
	}
	h := sc.headLocked()
	return &h, nil
}

// headLocked copies the scope's visible head.
func (sc *scope) headLocked() hoststore.VersionedHead {
	return hoststore.VersionedHead{Version: sc.version, CommitID: sc.commitID, Head: append([]byte{}, sc.head...)}
}

// ListHeads returns up to limit visible scopes of kind with names above
// *after, in byte order of name, each with its head. Next is the last name
// on the page while more follow, and nil otherwise.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if s.r.bugs.Has(EmptyOnEndedContext) && ctx.Err() != nil {
		return hoststore.HeadPage{}, nil
	}
	if err := s.enter(ctx); err != nil {
		return hoststore.HeadPage{}, err
	}
	if !kind.Valid() {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("scope kind %d is not a kind", uint8(kind))}
	}
	if limit <= 0 {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads limit %d is not positive", limit)}
	}
	if s.r.bugs.Has(UnknownError) && kind == hoststore.KindIdentity {
		return hoststore.HeadPage{}, errors.New("boom")
	}
	r := s.r
	less := func(a, b hoststore.ScopeName) bool { return a < b }
	if r.bugs.Has(UTF16Order) {
		less = utf16Less
	}
	r.mu.Lock()
	var found []*scope
	for ref, sc := range r.scopes {
		listed := sc.live() || sc.deleted && r.bugs.Has(ListedAfterDelete)
		if ref.Kind == kind && listed && (after == nil || less(*after, sc.name)) {
			found = append(found, sc)
		}
	}
	sort.Slice(found, func(i, j int) bool { return less(found[i].name, found[j].name) })
	more := len(found) > limit
	if more {
		found = found[:limit]
	}
	var pg hoststore.HeadPage
	for _, sc := range found {
		pg.Heads = append(pg.Heads, hoststore.NamedHead{Name: sc.name, Head: sc.headLocked()})
	}
	r.mu.Unlock()
	if more {
		last := pg.Heads[len(pg.Heads)-1].Name
		pg.Next = &last
	}
	if r.bugs.Has(NextAfterFullPage) && !more && limit > 0 && len(pg.Heads) == limit {
		first := pg.Heads[0].Name
		pg.Next = &first
	}
	if r.bugs.Has(SkipLastListed) && len(pg.Heads) > 0 {
		last := pg.Heads[len(pg.Heads)-1].Name
		pg.Heads = pg.Heads[:len(pg.Heads)-1]
		pg.Next = &last
	}
	return pg, nil
}

// ReadRows returns up to limit visible rows of the scope in index order,
// from index from, fewer only where the scope ends. A from below the lowest
// visible index returns *hoststore.InvalidError; a scope that does not
// exist returns no rows.
func (s *Store) ReadRows(ctx context.Context, ref hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if s.r.bugs.Has(EmptyOnEndedContext) && ctx.Err() != nil {
		return nil, nil
	}
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := ref.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: err.Error()}
	}
	if limit <= 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows limit %d is not positive", limit)}
	}
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	sc := r.scopes[r.key(ref)]
	if !sc.live() {
		return nil, nil
	}
	if from < sc.start {
		if !r.bugs.Has(ReadBelowStartOK) {
			return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows from %d is below the first visible row %d", from, sc.start)}
		}
		from = sc.start
	}
	var out []hoststore.Row
	if r.bugs.Has(ReadIgnoresLimit) {
		limit = int(sc.end - from)
	}
	for i := from; i < sc.end && len(out) < limit; i++ {
		out = append(out, hoststore.Row{Index: i, Data: append([]byte{}, sc.rows[i-sc.start]...)})
	}
	return out, nil
}

// utf16Less orders names by their UTF-16 code units, as a Java or
// JavaScript backend would (UTF16Order): a character above U+FFFF sorts
// before one in U+E000..U+FFFF, where byte order puts it after.
func utf16Less(a, b hoststore.ScopeName) bool {
	ua, ub := utf16.Encode([]rune(string(a))), utf16.Encode([]rune(string(b)))
	return slices.Compare(ua, ub) < 0
}

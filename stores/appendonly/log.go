package appendonly

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sort"

	"github.com/conform-spi/conform/hoststore"
)

const updateColumns = `commit_id, kind, name, previous, next, has_head, truncate_after, drop_before, deleted, appended`

// scanUpdate reads one row of updateColumns.
func scanUpdate(r *sql.Rows) (logUpdate, error) {
	var u logUpdate
	var id string
	var kind, next, hasHead, deleted, appended int64
	var name []byte
	var prev, trunc, drop sql.NullInt64
	if err := r.Scan(&id, &kind, &name, &prev, &next, &hasHead, &trunc, &drop, &deleted, &appended); err != nil {
		return u, err
	}
	u.id, u.scope = hoststore.CommitID(id), hoststore.ScopeRef{Kind: hoststore.ScopeKind(kind), Name: hoststore.ScopeName(name)}
	u.previous, u.next = uint64(prev.Int64), uint64(next)
	u.hasHead, u.deleted, u.appended = hasHead != 0, deleted != 0, uint64(appended)
	if trunc.Valid {
		u.truncAfter = hoststore.Ptr(uint64(trunc.Int64))
	}
	if drop.Valid {
		u.dropBefore = hoststore.Ptr(uint64(drop.Int64))
	}
	return u, nil
}

// readLog reads the whole log and resolves it: markers first, then acquire
// rows, then update rows, so that whatever a marker it read closes, and
// every acquire ordered before that marker, is there when read (see the
// package doc).
func (s *Store) readLog(ctx context.Context) (map[hoststore.ScopeRef]*view, error) {
	var markers []logMarker
	err := s.query(ctx, `SELECT seq, commit_id, token FROM markers ORDER BY seq`, nil, func(r *sql.Rows) error {
		var m logMarker
		var id string
		var tok int64
		if err := r.Scan(&m.seq, &id, &tok); err != nil {
			return err
		}
		m.id, m.token = hoststore.CommitID(id), uint64(tok)
		markers = append(markers, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	acquires, err := s.acquires(ctx)
	if err != nil {
		return nil, err
	}
	var updates []logUpdate
	err = s.query(ctx, `SELECT `+updateColumns+` FROM updates_log ORDER BY rowid`, nil, func(r *sql.Rows) error {
		u, err := scanUpdate(r)
		updates = append(updates, u)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resolve(markers, acquires, updates), nil
}

// acquires reads every acquire row in seq order.
func (s *Store) acquires(ctx context.Context) ([]logAcquire, error) {
	var out []logAcquire
	err := s.query(ctx, `SELECT seq, token FROM fences WHERE kind = 'acquire' ORDER BY seq`, nil, func(r *sql.Rows) error {
		var a logAcquire
		var tok int64
		if err := r.Scan(&a.seq, &tok); err != nil {
			return err
		}
		a.token = uint64(tok)
		out = append(out, a)
		return nil
	})
	return out, err
}

// readScope resolves one scope from the part of the log that decides it:
// the batches connected to it through the scopes they share (a batch's
// visibility in one scope depends on every scope it writes, and nothing
// else). It first fixes the largest marker seq M and then considers only
// markers up to M: whatever such a marker closes, and every acquire
// ordered before it, was written before M was read.
func (s *Store) readScope(ctx context.Context, ref hoststore.ScopeRef) (*view, error) {
	var top int64
	if err := s.db.Read.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM markers`).Scan(&top); err != nil {
		return nil, err
	}
	acquires, err := s.acquires(ctx)
	if err != nil {
		return nil, err
	}
	var markers []logMarker
	var updates []logUpdate
	seenScope := map[hoststore.ScopeRef]bool{ref: true}
	seenID := map[hoststore.CommitID]bool{}
	for queue := []hoststore.ScopeRef{ref}; len(queue) > 0; queue = queue[1:] {
		ids, err := s.commitsOf(ctx, queue[0])
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if seenID[id] {
				continue
			}
			seenID[id] = true
			ms, err := s.markersOf(ctx, id, top)
			if err != nil {
				return nil, err
			}
			markers = append(markers, ms...)
			if !slices.ContainsFunc(ms, func(m logMarker) bool { return !fenced(m, acquires) }) {
				continue // no send of id can be visible: its scopes decide nothing here
			}
			err = s.query(ctx, `SELECT `+updateColumns+` FROM updates_log WHERE commit_id = ? ORDER BY rowid`, []any{string(id)}, func(r *sql.Rows) error {
				u, err := scanUpdate(r)
				updates = append(updates, u)
				if err == nil && !seenScope[u.scope] {
					seenScope[u.scope] = true
					queue = append(queue, u.scope)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(markers, func(i, j int) bool { return markers[i].seq < markers[j].seq })
	return resolve(markers, acquires, updates)[ref], nil
}

// commitsOf lists the commit ids of every update of ref in the log.
func (s *Store) commitsOf(ctx context.Context, ref hoststore.ScopeRef) ([]hoststore.CommitID, error) {
	var out []hoststore.CommitID
	err := s.query(ctx, `SELECT DISTINCT commit_id FROM updates_log WHERE kind = ? AND name = ?`, []any{int64(ref.Kind), []byte(ref.Name)}, func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		out = append(out, hoststore.CommitID(id))
		return err
	})
	return out, err
}

// markersOf returns id's markers with a seq up to top, in seq order.
func (s *Store) markersOf(ctx context.Context, id hoststore.CommitID, top int64) ([]logMarker, error) {
	var out []logMarker
	err := s.query(ctx, `SELECT seq, token FROM markers WHERE commit_id = ? AND seq <= ? ORDER BY seq`, []any{string(id), top}, func(r *sql.Rows) error {
		m := logMarker{id: id}
		var tok int64
		err := r.Scan(&m.seq, &tok)
		m.token = uint64(tok)
		out = append(out, m)
		return err
	})
	return out, err
}

// fenced reports whether an acquire ordered before m carries a higher
// token than m's (acquires in seq order).
func fenced(m logMarker, acquires []logAcquire) bool {
	for _, a := range acquires {
		if a.seq > m.seq {
			return false
		}
		if a.token > m.token {
			return true
		}
	}
	return false
}

// query runs a read and calls row for every row it returns.
func (s *Store) query(ctx context.Context, q string, args []any, row func(*sql.Rows) error) error {
	rows, err := s.db.Read.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := row(rows); err != nil {
			return errors.Join(err, rows.Close())
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}

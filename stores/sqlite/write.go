package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/conform-spi/conform/hoststore"
)

// write applies every update of b, whose scopes are at states, and records
// its commit id, all inside tx. Rows removed by TruncateAfter, DropBefore
// and Delete are deleted at once (logical and physical removal coincide).
func write(ctx context.Context, tx *sql.Tx, b *hoststore.CommitBatch, states []scopeState) (err error) {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO rows (kind, name, idx, data) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ins.Close()) }()
	id := string(b.CommitID())
	for i, u := range b.Updates() {
		if err := writeUpdate(ctx, tx, ins, id, u, states[i]); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO commits (commit_id) VALUES (?)`, id)
	return err
}

func writeUpdate(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, id string, u hoststore.ScopeUpdate, st scopeState) error {
	kind, name := int64(u.Scope.Kind), []byte(u.Scope.Name)
	next := int64(uint64(u.Next))
	if u.Delete {
		if _, err := tx.ExecContext(ctx, `DELETE FROM rows WHERE kind = ? AND name = ?`, kind, name); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE scopes SET version = ?, commit_id = ?, deleted = 1, start_idx = end_idx, head = NULL WHERE kind = ? AND name = ?`,
			next, id, kind, name)
		return err
	}
	start, end := st.start, st.end
	if u.Creates() {
		start, end = 0, 0
	}
	if t := u.TruncateAfter; t != nil && uint64(*t) < end {
		if _, err := tx.ExecContext(ctx, `DELETE FROM rows WHERE kind = ? AND name = ? AND idx >= ?`, kind, name, int64(*t)); err != nil {
			return err
		}
		end = uint64(*t)
		start = min(start, end)
	}
	if d := u.DropBefore; d != nil && uint64(*d) > start {
		// Past the end every row goes and the end stays: start = end.
		start = min(uint64(*d), end)
		if _, err := tx.ExecContext(ctx, `DELETE FROM rows WHERE kind = ? AND name = ? AND idx < ?`, kind, name, int64(start)); err != nil {
			return err
		}
	}
	for _, data := range u.Append {
		if data == nil {
			data = []byte{}
		}
		if _, err := ins.ExecContext(ctx, kind, name, int64(end), data); err != nil {
			return err
		}
		end++
	}
	if u.Creates() {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO scopes (kind, name, version, commit_id, deleted, start_idx, end_idx, head) VALUES (?, ?, ?, ?, 0, ?, ?, ?)`,
			kind, name, next, id, int64(start), int64(end), headBytes(u.Head))
		return err
	}
	if u.Head != nil {
		_, err := tx.ExecContext(ctx,
			`UPDATE scopes SET version = ?, commit_id = ?, start_idx = ?, end_idx = ?, head = ? WHERE kind = ? AND name = ?`,
			next, id, int64(start), int64(end), headBytes(u.Head), kind, name)
		return err
	}
	_, err := tx.ExecContext(ctx,
		`UPDATE scopes SET version = ?, commit_id = ?, start_idx = ?, end_idx = ? WHERE kind = ? AND name = ?`,
		next, id, int64(start), int64(end), kind, name)
	return err
}

// headBytes is the head to store: never nil, so that an empty head is an
// empty blob.
func headBytes(h *[]byte) []byte {
	if h == nil || *h == nil {
		return []byte{}
	}
	return *h
}

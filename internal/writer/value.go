package writer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/conform-spi/conform/hoststore"
)

// The layout of what a writer stores is its own, and no store may rely on
// it (docs/host-store-contract.md#writer-rules). Every head a
// writer writes for its caller is an envelope:
//
//	'I' value                        the value inline
//	'C' sha256(32) length(8, BE) name  the value in the chunk scope name
//
// A chunk scope is a Record scope named ChunkPrefix + 32 hex digits of the
// value's digest + "/" + a name unique in the realm; its head is
// 'H' sha256(32) length(8, BE) and its rows, in index order from 0, are
// the value's bytes. Rows are stored as the caller gives them.
const (
	tagInline      = 'I'
	tagChunked     = 'C'
	tagChunkHeader = 'H'
	refLen         = 1 + sha256.Size + 8 // a chunked envelope without its name
	chunkHeaderLen = 1 + sha256.Size + 8
)

// ChunkRef is where a chunked value lives.
type ChunkRef struct {
	// Scope is the chunk scope (kind Record).
	Scope hoststore.ScopeRef
	// Digest is the value's SHA-256.
	Digest [sha256.Size]byte
	// Length is the value's length in bytes.
	Length uint64
}

// Decode splits a head a writer wrote: the value itself when it is
// inline, or where its chunks are. A head no writer wrote is a
// *FormatError.
func Decode(head []byte) (inline []byte, ref *ChunkRef, err error) {
	if len(head) == 0 {
		return nil, nil, &FormatError{Detail: "empty head: not written by a writer"}
	}
	switch head[0] {
	case tagInline:
		return head[1:], nil, nil
	case tagChunked:
		if len(head) <= refLen {
			return nil, nil, &FormatError{Detail: fmt.Sprintf("chunked head of %d bytes is too short", len(head))}
		}
		r := &ChunkRef{Length: binary.BigEndian.Uint64(head[1+sha256.Size : refLen])}
		copy(r.Digest[:], head[1:1+sha256.Size])
		r.Scope = hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(head[refLen:])}
		if err := r.Scope.Validate(); err != nil {
			return nil, nil, &FormatError{Detail: "chunked head names no scope: " + err.Error()}
		}
		return nil, r, nil
	}
	return nil, nil, &FormatError{Detail: fmt.Sprintf("head starts with %q: not written by a writer", head[0])}
}

// Refs returns the chunk scope a head refers to, if any. A head no writer
// wrote refers to none.
func Refs(head []byte) (hoststore.ScopeName, bool) {
	_, r, err := Decode(head)
	if err != nil || r == nil {
		return "", false
	}
	return r.Scope.Name, true
}

// IsChunk tells whether s is a chunk scope under prefix ("" means
// DefaultChunkPrefix).
func IsChunk(prefix string, s hoststore.ScopeRef) bool {
	if prefix == "" {
		prefix = DefaultChunkPrefix
	}
	return s.Kind == hoststore.KindRecord && strings.HasPrefix(string(s.Name), prefix)
}

func encodeInline(v []byte) []byte {
	out := make([]byte, 0, 1+len(v))
	return append(append(out, tagInline), v...)
}

func encodeRef(digest [sha256.Size]byte, n int, name hoststore.ScopeName) []byte {
	out := make([]byte, 0, refLen+len(name))
	out = append(out, tagChunked)
	out = append(out, digest[:]...)
	out = binary.BigEndian.AppendUint64(out, uint64(n))
	return append(out, name...)
}

func chunkHeader(digest [sha256.Size]byte, n int) []byte {
	out := make([]byte, 0, chunkHeaderLen)
	out = append(out, tagChunkHeader)
	out = append(out, digest[:]...)
	return binary.BigEndian.AppendUint64(out, uint64(n))
}

func chunkName(prefix string, digest [sha256.Size]byte, unique string) hoststore.ScopeName {
	return hoststore.ScopeName(prefix + hex.EncodeToString(digest[:16]) + "/" + unique)
}

// ReadValue returns the value a head holds: the inline bytes, or the
// chunks it refers to read from st, checked against their digest and
// length. A head no writer wrote, a missing chunk scope and a value that
// does not match are *FormatError; a store error is returned as it is.
func ReadValue(ctx context.Context, st hoststore.HostStore, head []byte) ([]byte, error) {
	inline, ref, err := Decode(head)
	if err != nil {
		return nil, err
	}
	if ref == nil {
		return bytes.Clone(inline), nil
	}
	h, err := st.LoadHead(ctx, ref.Scope)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, &FormatError{Detail: fmt.Sprintf("chunk scope %s does not exist", ref.Scope)}
	}
	if !bytes.Equal(h.Head, chunkHeader(ref.Digest, int(ref.Length))) {
		return nil, &FormatError{Detail: fmt.Sprintf("chunk scope %s has a header that does not match its reference", ref.Scope)}
	}
	out := make([]byte, 0, ref.Length)
	for from := hoststore.RowIndex(0); uint64(len(out)) < ref.Length; {
		rows, err := st.ReadRows(ctx, ref.Scope, from, 64)
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			if r.Index != from {
				return nil, &FormatError{Detail: fmt.Sprintf("chunk scope %s: row %d where %d was due", ref.Scope, r.Index, from)}
			}
			out = append(out, r.Data...)
			from++
		}
	}
	if uint64(len(out)) != ref.Length || sha256.Sum256(out) != ref.Digest {
		return nil, &FormatError{Detail: fmt.Sprintf("chunk scope %s holds %d bytes that do not match the value's %d bytes and digest", ref.Scope, len(out), ref.Length)}
	}
	return out, nil
}

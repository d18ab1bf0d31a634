package writer

import (
	"fmt"
	"strings"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Options configure a writer. Every zero value is usable.
type Options struct {
	// Clock is the writer's own clock; nil means SystemClock().
	Clock Clock
	// Takeover makes Open acquire with hoststore.Takeover: an explicit
	// takeover, which ends any holder's lease. Otherwise Open acquires exclusively
	// and returns the store's *hoststore.HeldError when another holder is
	// live.
	Takeover bool
	// ChunkPrefix starts the names of the Record scopes that hold chunks
	// of large values; "" means "chunk/". The writer owns every Record
	// scope whose name starts with it: it deletes those no head refers to.
	ChunkPrefix string
	// ChunkThreshold: a head longer than this is written as chunks; 0
	// means 256 KiB. A change whose commit batch would not fit the limits
	// has more of its heads chunked, largest first.
	ChunkThreshold int
	// Limits are the limits the writer keeps; a zero field means the
	// contract's (hoststore.MaxBatchBytes, hoststore.MaxRowBytes).
	Limits Limits
	// SweepEvery runs the background sweep of unreferenced chunks every
	// this long on Clock; 0 runs none (the sweep at Open still runs).
	SweepEvery time.Duration
	// ListPage is the page size of the bulk load; 0 means 500.
	ListPage int
	// SettleTries bounds how many times one batch is sent while its
	// outcome stays unknown before the writer gives up for now (the
	// change fails, and the batch is settled before the next commit that
	// touches one of its scopes); 0 means 3.
	SettleTries int
	// Logf, when set, gets one line per fence event and settled unknown.
	Logf func(format string, args ...any)
	// Unsafe breaks writer rules on purpose. Test only: see Unsafe.
	Unsafe Unsafe
}

// Limits are the batch and row limits a writer keeps. Values above
// hoststore's constants are refused; lower values make small values need chunks
// and several batches, which is how tests exercise chunking cheaply.
type Limits struct {
	// BatchBytes bounds the heads plus rows of one batch; 0 means
	// hoststore.MaxBatchBytes.
	BatchBytes int
	// RowBytes bounds one row; 0 means hoststore.MaxRowBytes.
	RowBytes int
}

// Unsafe is for tests of harnesses only: each field makes the writer break
// one of the writer rules, so that a chapter that checks the run (not
// just that it ended) can be shown to catch it. A writer with any field set
// is not a correct writer and must never drive a real realm.
type Unsafe struct {
	// SkipSelfFence skips the self-fence check before commits, model calls
	// and tool calls, and the fresh acquire after a failed renew.
	SkipSelfFence bool
	// SkipTakeoverWait skips waiting out a superseded live holder's lease
	// before model calls and tool calls.
	SkipTakeoverWait bool
	// ReuseCommitIDs numbers commit ids (and chunk scopes) from 1 in every
	// process, without the fence token, so a restarted process reuses the
	// ids of the one before it for different content.
	ReuseCommitIDs bool
}

// Any reports whether any rule is broken.
func (u Unsafe) Any() bool { return u.SkipSelfFence || u.SkipTakeoverWait || u.ReuseCommitIDs }

// DefaultChunkPrefix is the ChunkPrefix of zero Options.
const DefaultChunkPrefix = "chunk/"

func (o Options) resolve() (Options, error) {
	if o.Clock == nil {
		o.Clock = SystemClock()
	}
	if o.ChunkPrefix == "" {
		o.ChunkPrefix = DefaultChunkPrefix
	}
	// The longest chunk name: the prefix, 32 hex digits, "/" and the
	// longest id ("t" and "-" around two 20-digit numbers).
	if err := hoststore.ScopeName(o.ChunkPrefix + strings.Repeat("0", 32) + "/t" + strings.Repeat("9", 41)).Validate(); err != nil {
		return o, fmt.Errorf("writer: chunk prefix %q: %w", o.ChunkPrefix, err)
	}
	if o.ChunkThreshold <= 0 {
		o.ChunkThreshold = 256 << 10
	}
	switch {
	case o.Limits.BatchBytes == 0:
		o.Limits.BatchBytes = hoststore.MaxBatchBytes
	case o.Limits.BatchBytes < 0 || o.Limits.BatchBytes > hoststore.MaxBatchBytes:
		return o, fmt.Errorf("writer: batch limit %d is outside (0, %d]", o.Limits.BatchBytes, hoststore.MaxBatchBytes)
	}
	switch {
	case o.Limits.RowBytes == 0:
		o.Limits.RowBytes = hoststore.MaxRowBytes
	case o.Limits.RowBytes < 0 || o.Limits.RowBytes > hoststore.MaxRowBytes:
		return o, fmt.Errorf("writer: row limit %d is outside (0, %d]", o.Limits.RowBytes, hoststore.MaxRowBytes)
	}
	if o.Limits.BatchBytes < 2*chunkHeaderLen {
		return o, fmt.Errorf("writer: batch limit %d leaves no room for a chunk", o.Limits.BatchBytes)
	}
	if o.SweepEvery < 0 {
		return o, fmt.Errorf("writer: sweep interval %s is negative", o.SweepEvery)
	}
	if o.ListPage <= 0 {
		o.ListPage = 500
	}
	if o.SettleTries <= 0 {
		o.SettleTries = 3
	}
	return o, nil
}

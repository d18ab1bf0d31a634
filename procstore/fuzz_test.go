package procstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore/internal/wire"
)

// FuzzDecodeResponse reads one line a store process wrote as the harness
// reads it (readLine, then handle's checks), and decodes its answer as
// every op's result and as an error. Whatever the line, decoding returns
// an error or a value hoststore's Validate functions accept: the
// conversions below are those of ops.go, applied where decodeResult
// accepted the result.
func FuzzDecodeResponse(f *testing.F) {
	for _, line := range []string{
		`{"id":0,"ok":{"version":1,"store":"python-sqlite","timing":{"renew_interval_ns":10000000000,"lease_ns":30000000000,"self_fence_margin_ns":10000000000,"max_commit_latency_ns":2000000000}}}`,
		`{"id":0,"ok":{"version":1}}`,
		`{"id":1,"ok":{"token":3,"superseded_lease_ns":0}}`,
		`{"id":2,"ok":{}}`,
		`{"id":3,"ok":{"head":null}}`,
		`{"id":3,"ok":{"head":{"version":2,"commit_id":"c1","head":"aDE="}}}`,
		`{"id":4,"ok":{"heads":[{"name":"a","version":1,"commit_id":"c1","head":""},{"name":"b","version":3,"commit_id":"c2","head":"aDI="}],"next":"b"}}`,
		`{"id":4,"ok":{"heads":[],"next":null}}`,
		`{"id":5,"ok":{"rows":[{"index":0,"data":"cjA="},{"index":1,"data":""}]}}`,
		`{"id":5,"ok":{"rows":[]}}`,
		`{"id":6,"error":{"kind":"conflict","scope":{"kind":"Session","name":"a"},"current":null}}`,
		`{"id":6,"error":{"kind":"conflict","scope":{"kind":"Record","name":"a"},"current":4}}`,
		`{"id":7,"error":{"kind":"fenced_out","current":5}}`,
		`{"id":8,"error":{"kind":"held","holder":2,"remaining_ns":29000000000}}`,
		`{"id":9,"error":{"kind":"indeterminate","detail":"timeout"}}`,
		`{"id":9,"error":{"kind":"invalid","detail":"limit 0"}}`,
		`{"id":9,"error":{"kind":"unavailable","detail":"disk"}}`,
		`{"call":0,"op":"at","req":7,"site":"commit-locked","commit_id":"c1"}`,
		// What decodeResult let through before it checked heads, names
		// and cursors: a head whose commit id is not one, at version 0,
		// and listed under an empty name after a cursor with a control
		// character; a conflict over a scope with an empty name.
		`{"id":3,"ok":{"head":{"version":0,"commit_id":"\u0000","head":""}}}`,
		`{"id":4,"ok":{"heads":[{"name":"","version":1,"commit_id":"c1","head":""}],"next":"\u0007"}}`,
		`{"id":6,"error":{"kind":"conflict","scope":{"kind":"Session","name":""},"current":0}}`,
	} {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// readLine gives back every line, whatever their length.
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var back [][]byte
		for {
			line, err := readLine(br)
			if err != nil {
				back = append(back, line)
				break
			}
			back = append(back, line)
		}
		if got := bytes.Join(back, []byte("\n")); !bytes.Equal(got, data) {
			t.Fatalf("readLine read %q back as %q", data, got)
		}
		line := back[0]

		var m wire.Message
		if err := json.Unmarshal(line, &m); err != nil || (m.ID == nil) == (m.Call == nil) || m.Call != nil {
			return
		}
		if (m.OK == nil) == (m.Error == nil) {
			return
		}
		if m.Error != nil {
			checkError(t, m.Error)
			return
		}
		var hello wire.Hello
		if decodeResult(m.OK, &hello) == nil {
			if ft, err := hello.Timing.FenceTiming(); err == nil && !ft.Valid() {
				t.Fatalf("the handshake's timing %+v gave an invalid timing %v", hello.Timing, ft)
			}
		}
		var g wire.Grant
		if decodeResult(m.OK, &g) == nil {
			fg := hoststore.FenceGrant{Token: hoststore.FenceToken(*g.Token), SupersededLease: time.Duration(*g.SupersededLeaseN)}
			if fg.SupersededLease < 0 {
				t.Fatalf("a grant with a negative superseded lease: %+v", fg)
			}
		}
		var hr wire.HeadResult
		if decodeResult(m.OK, &hr) == nil && hr.Head != nil {
			h, err := hr.Head.VersionedHead()
			if err != nil {
				t.Fatalf("decodeResult accepted a head VersionedHead refuses: %v", err)
			}
			checkHead(t, h)
		}
		var p wire.Page
		if decodeResult(m.OK, &p) == nil {
			for _, w := range *p.Heads {
				h, err := w.VersionedHead()
				if err != nil {
					t.Fatalf("decodeResult accepted a listed head VersionedHead refuses: %v", err)
				}
				checkHead(t, h)
				if err := hoststore.ScopeName(w.Name).Validate(); err != nil {
					t.Fatalf("decodeResult accepted a listed name: %v", err)
				}
			}
			if p.Next != nil {
				if err := hoststore.ScopeName(*p.Next).Validate(); err != nil {
					t.Fatalf("decodeResult accepted a next cursor: %v", err)
				}
			}
		}
		var r wire.Rows
		if decodeResult(m.OK, &r) == nil {
			for _, w := range *r.Rows {
				_ = hoststore.Row{Index: hoststore.RowIndex(*w.Index), Data: *w.Data}
			}
		}
		_ = decodeResult(m.OK, &wire.Empty{})
	})
}

// checkHead fails t unless h is a head a store could answer.
func checkHead(t *testing.T, h hoststore.VersionedHead) {
	t.Helper()
	if err := h.CommitID.Validate(); err != nil {
		t.Fatalf("a decoded head's %v", err)
	}
	if h.Version < hoststore.FirstVersion {
		t.Fatalf("a decoded head at version %d", h.Version)
	}
}

// checkError fails t unless e decodes to one of the six contract errors,
// with valid fields, or to a reason it does not.
func checkError(t *testing.T, e *wire.Error) {
	t.Helper()
	err, bad := e.Err()
	if bad != nil {
		if err != nil {
			t.Fatalf("Err returned both %v and %v", err, bad)
		}
		return
	}
	if hoststore.KindOf(err) == hoststore.ErrKindNone || err.Error() == "" {
		t.Fatalf("Err returned %v, of no contract kind", err)
	}
	var ce *hoststore.ConflictError
	if errors.As(err, &ce) {
		if err := ce.Scope.Validate(); err != nil {
			t.Fatalf("a decoded conflict's %v", err)
		}
		if ce.Current != nil && *ce.Current < hoststore.FirstVersion {
			t.Fatalf("a decoded conflict at version %d", *ce.Current)
		}
	}
	var he *hoststore.HeldError
	if errors.As(err, &he) && he.Remaining < 0 {
		t.Fatalf("a decoded held error with %s remaining", he.Remaining)
	}
	if w := wire.ErrorOf(err); w == nil {
		t.Fatalf("the decoded %v does not encode again", err)
	}
}

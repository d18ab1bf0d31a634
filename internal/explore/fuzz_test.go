package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fuzzConfig is what the fuzz targets replay under: a bound per history
// that a replay against the reference, which takes milliseconds, never
// reaches, and a bounded check.
var fuzzConfig = Config{HistoryTimeout: 5 * time.Second, Check: CheckConfig{Timeout: time.Second}}

// fuzzSeeds returns histories this package generates and records against
// the reference: a few plain ones, and the first with a peek inside a held
// commit, a wrapper fault and an in-store crash.
func fuzzSeeds(f *testing.F) []*History {
	f.Helper()
	var out []*History
	var peek, wrapper, crash bool
	for i := 0; i < 200 && (len(out) < 3 || !peek || !wrapper || !crash); i++ {
		h, err := Play(context.Background(), refRealm(f), HistorySeed(21, i), Config{MaxOps: 30})
		if err != nil {
			f.Fatal(err)
		}
		keep := len(out) < 3
		for _, e := range h.Events {
			if e.Inside != "" && !peek {
				peek, keep = true, true
			}
			if slices.ContainsFunc(e.Faults, func(x Fault) bool { return x.Layer == "wrapper" }) && !wrapper {
				wrapper, keep = true, true
			}
			if slices.ContainsFunc(e.Faults, func(x Fault) bool { return x.Kind == "crash" }) && !crash {
				crash, keep = true, true
			}
		}
		if keep {
			out = append(out, h)
		}
	}
	return out
}

// Pieces of hand-written scripts for FuzzReplayScript's seeds.
const (
	fuzzOpen   = `{"proc":0,"op":"open","call":1,"return":2},{"proc":0,"op":"acquire","call":3,"return":4,"mode":"Exclusive","grant":{"Token":1}}`
	fuzzUpdate = `"updates":[{"Scope":{"Kind":2,"Name":"f"},"Next":1,"Head":"aA=="}]`
)

// fuzzCrash returns process 0's commit c1, crashed after its commit point.
func fuzzCrash(call, ret int) string {
	return fmt.Sprintf(`{"proc":0,"op":"commit","call":%d,"return":%d,"batch":{"id":"c1","token":1,%s},"faults":[{"layer":"instore","site":"commit-after-point","kind":"crash"}]}`, call, ret, fuzzUpdate)
}

// fuzzPeek returns process 1's load inside c1.
func fuzzPeek(call, ret int) string {
	return fmt.Sprintf(`{"proc":1,"op":"load","call":%d,"return":%d,"scope":{"Kind":2,"Name":"f"},"inside":"c1"}`, call, ret)
}

// FuzzReplayScript decodes a script's JSON as a repro's is decoded and,
// when it decodes, replays it against the reference and checks the
// replay: whatever the script, the answer is an error or a verdict.
func FuzzReplayScript(f *testing.F) {
	for _, h := range fuzzSeeds(f) {
		data, err := json.Marshal(Script(h))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"events":[{"op":"open","call":1,"return":2},{"op":"read","call":3,"return":4,"scope":{"kind":1,"name":"a"},"limit":5}]}`))
	// What broke the replay before decoding checked scripts and replay
	// played peeks only where a held commit explains them:
	//
	// A peek called before the commit it is inside of: the replay waited
	// for the commit to be held before calling it, and hung until the
	// history's bound.
	f.Add([]byte(`{"events":[` + fuzzOpen + `,{"proc":1,"op":"open","call":5,"return":6},` + fuzzPeek(7, 8) + `,` + fuzzCrash(9, 12) + `,` + fuzzPeek(10, 11) + `]}`))
	// A peek by the process of the commit, and one called after the
	// commit returned: the commit was held for PeekBound (2 s) waiting for
	// a peek that could not be called before it ended.
	f.Add([]byte(`{"events":[` + fuzzOpen + `,` + fuzzCrash(9, 12) + `,` + strings.Replace(fuzzPeek(10, 11), `"proc":1`, `"proc":0`, 1) + `]}`))
	f.Add([]byte(`{"events":[` + fuzzOpen + `,{"proc":1,"op":"open","call":5,"return":6},` + fuzzCrash(9, 10) + `,` + fuzzPeek(11, 12) + `]}`))
	// A peek inside a commit of a process with no handle: the commit was
	// not sent, never got to its site, and the peek waited for it until
	// the history's bound.
	f.Add([]byte(`{"events":[` + strings.TrimPrefix(fuzzOpen, `{"proc":0,"op":"open","call":1,"return":2},`) + `,{"proc":1,"op":"open","call":5,"return":6},` + fuzzCrash(9, 12) + `,` + fuzzPeek(10, 11) + `]}`))
	// A commit id of 128 bytes of two-byte characters: the replay cut it
	// inside a character to fit its suffix, the cut id no longer built,
	// play panicked before calling it, and the replay waited for the call
	// forever.
	f.Add([]byte(`{"events":[` + fuzzOpen + `,{"proc":0,"op":"commit","call":5,"return":6,"batch":{"id":"` + strings.Repeat("é", 64) + `","token":1,` + fuzzUpdate + `}}]}`))
	// An operation that is not one: it was played as not sent.
	f.Add([]byte(`{"events":[` + fuzzOpen + `,{"proc":0,"op":"frob","call":5,"return":6}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := decodeScript(data)
		if err != nil {
			return
		}
		r, err := Replay(context.Background(), refRealm(t), h, fuzzConfig)
		if err != nil {
			return
		}
		_ = Check(r, fuzzConfig.Check)
		_ = r.Text()
	})
}

// FuzzDecodeRepro decodes a repro's history value, and re-encodes what
// decodes: whatever the value, the answer is an error or a script that
// survives the round trip.
func FuzzDecodeRepro(f *testing.F) {
	for _, h := range fuzzSeeds(f) {
		line, err := EncodeRepro(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line)
	}
	f.Add("h1.")
	f.Add("h1.AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeRepro(s)
		if err != nil {
			return
		}
		line, err := EncodeRepro(h)
		if err != nil {
			t.Fatalf("a decoded script does not encode: %v", err)
		}
		if _, err := DecodeRepro(line); err != nil {
			t.Fatalf("a decoded script, encoded again, does not decode: %v", err)
		}
		_ = h.Text()
	})
}

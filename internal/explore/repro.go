package explore

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// Script returns h as a script for Replay: the events' calls, arguments,
// faults and clock, with the answers left out except the acquires'
// grants (which name the tokens later events refer to).
func Script(h *History) *History {
	c := &History{Seed: h.Seed, Procs: h.Procs, Lease: h.Lease, Events: make([]Event, len(h.Events))}
	for i, e := range h.Events {
		s := e.request()
		s.ID, s.Handle, s.Call, s.Return = e.ID, e.Handle, e.Call, e.Return
		s.Token, s.Batch, s.Faults = e.Token, e.Batch, e.Faults // as recorded, whatever the operation
		if e.Op == OpAcquire && e.Grant != nil {
			s.Grant = &hoststore.FenceGrant{Token: e.Grant.Token}
		}
		c.Events[i] = s
	}
	return c
}

// request returns what e asks of a store, as the player takes it: its
// process, operation, arguments (a token for a renew, a batch for a
// commit), faults and the commit it is inside of; no clock, no answer.
func (e *Event) request() Event {
	r := Event{Proc: e.Proc, Op: e.Op, Mode: e.Mode, Scope: e.Scope, Kind: e.Kind, After: e.After, From: e.From, Limit: e.Limit,
		Faults: slices.Clone(e.Faults), Inside: e.Inside}
	switch e.Op {
	case OpRenew:
		r.Token = e.Token
	case OpCommit:
		r.Batch = e.Batch
	}
	return r
}

// reproPrefix versions the repro encoding.
const reproPrefix = "h1."

// EncodeRepro returns h's script (see Script) on one line: "h1." and the
// URL-safe, unpadded base64 of the deflated JSON. It holds no space,
// semicolon, percent sign, plus or equals sign, so it can be the value of
// a key=value part of a repro string as it is. DecodeRepro reads it back.
func EncodeRepro(h *History) (string, error) {
	data, err := json.Marshal(Script(h))
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(data); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return reproPrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// maxReproJSON bounds the JSON a repro may inflate to.
const maxReproJSON = 16 << 20

// DecodeRepro reads back what EncodeRepro wrote: a script Replay plays.
func DecodeRepro(s string) (*History, error) {
	rest, ok := strings.CutPrefix(s, reproPrefix)
	if !ok {
		return nil, fmt.Errorf("explore: repro %.16q…: does not start with %q", s, reproPrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxReproJSON+1))
	if err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	if len(data) > maxReproJSON {
		return nil, fmt.Errorf("explore: repro: over %d bytes of JSON", maxReproJSON)
	}
	return decodeScript(data)
}

// Bounds on a script read from a repro, far above what a generated or
// shrunk history holds (MaxOps operations over at most 4 processes and
// their observers).
const (
	maxReproEvents = 1 << 14
	maxReproProcs  = 64
)

// decodeScript returns the script whose JSON is data, as DecodeRepro
// reads it, or an error naming the first thing wrong with it: too many
// events, or an event with an unknown operation, a process out of range,
// a clock that is not positive or a return not after its call, an acquire
// mode that is not one, a missing argument, a batch NewCommitBatch
// refuses, or a fault that is not one replay injects.
func decodeScript(data []byte) (*History, error) {
	var h History
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	if len(h.Events) > maxReproEvents {
		return nil, fmt.Errorf("explore: repro: %d events, over the limit of %d", len(h.Events), maxReproEvents)
	}
	for i := range h.Events {
		if err := checkScriptEvent(&h.Events[i]); err != nil {
			return nil, fmt.Errorf("explore: repro: event %d: %w", i, err)
		}
	}
	return &h, nil
}

// checkScriptEvent returns what is wrong with e as an event of a script
// Replay plays, or nil.
func checkScriptEvent(e *Event) error {
	switch e.Op {
	case OpAcquire, OpRenew, OpLapse, OpLoad, OpList, OpRead, OpCommit, OpOpen, OpKill, OpClose:
	default:
		return fmt.Errorf("unknown operation %.32q", e.Op)
	}
	if e.Proc < 0 || e.Proc >= maxReproProcs {
		return fmt.Errorf("proc %d out of range [0, %d)", e.Proc, maxReproProcs)
	}
	if e.Call < 1 {
		return fmt.Errorf("call %d is not a positive clock", e.Call)
	}
	if e.Return != 0 && e.Return <= e.Call {
		return fmt.Errorf("return %d is not after call %d", e.Return, e.Call)
	}
	if e.Op == OpAcquire && e.Mode != hoststore.Exclusive.String() && e.Mode != hoststore.Takeover.String() {
		return fmt.Errorf("acquire mode %.32q is not Exclusive or Takeover", e.Mode)
	}
	if e.Op == OpCommit && e.Batch == nil || (e.Op == OpLoad || e.Op == OpRead) && e.Scope == nil {
		return fmt.Errorf("%s lacks its arguments", e.Op)
	}
	if e.Op == OpCommit {
		if _, err := e.Batch.Build(); err != nil {
			return err
		}
	}
	if len(e.Faults) > 0 && e.Op != OpCommit {
		return fmt.Errorf("faults on a %s: only a commit takes faults", e.Op)
	}
	for _, f := range e.Faults {
		if !replayable(f) {
			return fmt.Errorf("fault %.64q is not one replay injects", f.String())
		}
	}
	return nil
}

// replayable reports whether inject injects f: a kill before the send, in
// flight or after the answer, an Indeterminate answer before the send or
// after the answer, or a crash at an in-store site, at a pass not below 0.
func replayable(f Fault) bool {
	switch f.Layer {
	case "wrapper":
		switch f.Site {
		case faults.BeforeSend.String(), faults.AfterAnswer.String():
			return f.Kind == "kill" || f.Kind == "indeterminate"
		case faults.InFlight.String():
			return f.Kind == "kill"
		}
	case "instore":
		return f.Kind == "crash" && f.Pass >= 0 && slices.Contains(instore.Sites, instore.Site(f.Site))
	}
	return false
}

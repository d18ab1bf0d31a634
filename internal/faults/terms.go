package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pingcap/failpoint"

	"github.com/conform-spi/conform/internal/ctxtime"
)

// Terms
//
// conform takes a subset of pingcap/failpoint's term language:
//
//	terms  = term { "->" term }
//	term   = { count "*" } action
//	action = "off" | "return(" value ")" | "sleep(" ms | "\"" duration "\"" ")"
//	value  = "\"" text "\"" | "true" | "false" | digits
//
// where text has no quote or backslash. Every term must also parse the
// same way in pingcap/failpoint, which then keeps the counts and walks the
// chain. conform refuses what the library does badly for a harness:
//   - `N%` draws from math/rand's global source (seeded from the wall clock
//     in the library's init), so a run could not be reproduced;
//   - `pause` blocks every caller until the failpath is disabled, releasing
//     all of them at once, and re-arming a paused failpath deadlocks the
//     whole registry (Enable takes the registry's lock, then waits for the
//     paused evaluation's read lock); hold one commit with HoldAt instead;
//   - `panic` would panic in the store's own goroutine, `break` starts gdb,
//     `print` writes to the harness's standard output.
//
// A `sleep` is not left to the library either: it sleeps holding the
// failpath's locks, which serialises every caller of the site and stalls
// any Enable or Disable (and with them the whole registry) for the sleep.
// conform arms each term as `return(i)` and acts on term i itself, after the
// library has answered: a sleep holds no lock and ends early with ctx.

// actKind is what a term does.
type actKind int

const (
	actOff actKind = iota
	actReturn
	actSleep
)

// termAct is one parsed term.
type termAct struct {
	desc  string        // the term as written
	mods  string        // its counts, e.g. "1*"
	kind  actKind       // off, return or sleep
	ret   any           // return: string, bool or int; nil when no value
	sleep time.Duration // sleep
}

// refusedActs explains why conform refuses pingcap actions it does not take.
var refusedActs = map[string]string{
	"pause": `"pause" releases every paused caller only when the failpath is disabled, and re-arming a paused failpath deadlocks the registry; hold one commit with HoldAt instead`,
	"panic": `"panic" would panic in the store's own goroutine; crash with return("crash") instead`,
	"break": `"break" starts a debugger`,
	"print": `"print" writes to the harness's standard output`,
}

// parseTerms parses terms in conform's subset and checks that
// pingcap/failpoint parses them too. It returns the chain and the terms to
// arm in the library: the same counts, each action replaced by return(i).
func parseTerms(terms string) ([]termAct, string, error) {
	if terms == "" {
		return nil, "", fmt.Errorf("failpoint terms are empty; want e.g. %s", `1*return("crash")`)
	}
	// pingcap/failpoint's parser panics on some malformed input; nothing it
	// could mishandle reaches it.
	if err := checkText("failpoint terms", terms); err != nil {
		return nil, "", err
	}
	var chain []termAct
	var lib strings.Builder
	rest := terms
	for {
		t, err := parseTerm(rest)
		if err != nil {
			return nil, "", fmt.Errorf("failpoint terms %q: %v", terms, err)
		}
		lib.WriteString(t.mods + "return(" + strconv.Itoa(len(chain)) + ")")
		chain = append(chain, t)
		rest = rest[len(t.desc):]
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, "->") {
			return nil, "", fmt.Errorf("failpoint terms %q: want \"->\" between terms, found %q after term %q", terms, rest, t.desc)
		}
		rest = rest[2:]
		lib.WriteString("->")
	}
	// The library must read the terms as conform does; its own parser is
	// the reference for the syntax, ours only narrows it.
	var probe failpoint.Failpoint
	if err := probe.Enable(terms); err != nil {
		return nil, "", fmt.Errorf("failpoint terms %q: %v", terms, err)
	}
	probe.Disable()
	return chain, lib.String(), nil
}

// parseTerm parses the term at the start of s; t.desc is what it took.
func parseTerm(s string) (termAct, error) {
	var t termAct
	i := 0
	for i < len(s) && isDigit(s[i]) {
		j := i
		for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
			j++
		}
		if j < len(s) && s[j] == '%' {
			return t, fmt.Errorf("at %q: \"N%%\" terms draw from math/rand's global source, which a run cannot seed; use a counted term such as %s", s[i:], `1*return("crash")`)
		}
		if j == len(s) || s[j] != '*' || strings.IndexByte(s[i:j], '.') >= 0 {
			return t, fmt.Errorf("at %q: a count is a whole number followed by \"*\"", s[i:])
		}
		if _, err := strconv.Atoi(s[i:j]); err != nil {
			return t, fmt.Errorf("at %q: count %s: %v", s[i:], s[i:j], err)
		}
		i = j + 1
	}
	t.mods = s[:i]
	name := s[i:]
	if k := strings.IndexAny(name, "(-"); k >= 0 {
		name = name[:k]
	}
	if why, ok := refusedActs[name]; ok {
		return t, fmt.Errorf("term %q: %s", s, why)
	}
	switch name {
	case "off":
		t.kind = actOff
	case "return":
		t.kind = actReturn
	case "sleep":
		t.kind = actSleep
	default:
		return t, fmt.Errorf("at %q: unknown action; conform takes off, return(value) and sleep(ms)", s[i:])
	}
	i += len(name)
	val, n, err := parseValue(s[i:])
	if err != nil {
		return t, fmt.Errorf("term %q: %v", s[:i], err)
	}
	i += n
	t.desc = s[:i]
	switch t.kind {
	case actOff:
		if n > 0 {
			return t, fmt.Errorf("term %q: off takes no value", t.desc)
		}
	case actReturn:
		t.ret = val
	case actSleep:
		d, err := sleepValue(val)
		if err != nil {
			return t, fmt.Errorf("term %q: %v", t.desc, err)
		}
		t.sleep = d
	}
	return t, nil
}

// parseValue parses an optional "(value)" at the start of s: a string
// without quote or backslash, true, false or a non-negative integer. It
// returns the value (nil for none) and how many bytes it took.
func parseValue(s string) (any, int, error) {
	if s == "" || s[0] != '(' {
		return nil, 0, nil
	}
	end := strings.IndexByte(s, ')')
	if len(s) > 1 && s[1] == '"' {
		q := strings.IndexByte(s[2:], '"')
		if q < 0 {
			return nil, 0, fmt.Errorf("at %q: unterminated string", s)
		}
		text := s[2 : 2+q]
		if strings.IndexByte(text, '\\') >= 0 {
			return nil, 0, fmt.Errorf("at %q: escapes in strings are not taken", s)
		}
		if 3+q >= len(s) || s[3+q] != ')' {
			return nil, 0, fmt.Errorf("at %q: want \")\" after the string", s)
		}
		return text, 4 + q, nil
	}
	if end < 0 {
		return nil, 0, fmt.Errorf("at %q: want \")\"", s)
	}
	raw := s[1:end]
	switch raw {
	case "":
		return nil, 0, fmt.Errorf("at %q: empty value; drop the parentheses or give a value", s)
	case "true":
		return true, end + 1, nil
	case "false":
		return false, end + 1, nil
	}
	for k := 0; k < len(raw); k++ {
		if !isDigit(raw[k]) {
			return nil, 0, fmt.Errorf("at %q: a value is a quoted string, true, false or digits", s)
		}
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("at %q: %v", s, err)
	}
	return n, end + 1, nil
}

// sleepValue reads a sleep's value: milliseconds, or a duration string.
func sleepValue(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int:
		if x > int(MaxSleep/time.Millisecond) {
			return 0, fmt.Errorf("sleep: %d ms is more than the longest sleep, %s", x, MaxSleep)
		}
		return time.Duration(x) * time.Millisecond, nil
	case string:
		d, err := time.ParseDuration(x)
		if err != nil {
			return 0, fmt.Errorf("sleep: %v", err)
		}
		if d < 0 {
			return 0, fmt.Errorf("sleep: negative duration %s", d)
		}
		if d > MaxSleep {
			return 0, fmt.Errorf("sleep: %s is more than the longest sleep, %s", d, MaxSleep)
		}
		return d, nil
	}
	return 0, fmt.Errorf("sleep needs milliseconds or a duration string, e.g. sleep(10) or sleep(%q)", "10ms")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// MaxSleep is the longest sleep a term may ask for.
const MaxSleep = time.Hour

// MaxTermsBytes is the longest failpoint argument taken.
const MaxTermsBytes = 4096

// checkText refuses text that no parser of user input should see: invalid
// UTF-8, control characters, and more than MaxTermsBytes bytes. what names
// the text in the error.
func checkText(what, s string) error {
	if len(s) > MaxTermsBytes {
		return fmt.Errorf("%s: %d bytes, more than %d", what, len(s), MaxTermsBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q: not valid UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q: control character %U", what, s, r)
		}
	}
	return nil
}

// checkReturns refuses a chain with a return value that ok does not take;
// want describes the values taken.
func checkReturns(chain []termAct, ok func(any) bool, want string) error {
	for _, t := range chain {
		if t.kind == actReturn && !ok(t.ret) {
			return fmt.Errorf("term %q: return takes %s here", t.desc, want)
		}
	}
	return nil
}

// termSet is one arming of terms: the parsed chain and the private failpath
// of the library holding its counts. Each arming has its own failpath, so a
// term's index never refers to another arming's chain.
type termSet struct {
	path  string
	terms string
	chain []termAct
}

var termGen atomic.Uint64

// armTermSet enables the library's side of an arming under base.
func armTermSet(base, terms string, chain []termAct, lib string) (*termSet, error) {
	path := base + "#terms." + strconv.FormatUint(termGen.Add(1), 10)
	if err := failpoint.Enable(path, lib); err != nil {
		return nil, fmt.Errorf("failpoint %s: terms %q: %v", base, terms, err)
	}
	return &termSet{path: path, terms: terms, chain: chain}, nil
}

// disarm disables the arming's failpath; an evaluation racing with it
// returns no term.
func (ts *termSet) disarm() { mustDisable(ts.path) }

// next evaluates the terms once and returns the term that fired, or nil
// when none did (counts spent, or disarmed meanwhile).
func (ts *termSet) next() *termAct {
	v, err := failpoint.Eval(ts.path)
	switch err {
	case nil:
	case failpoint.ErrNotAllowed, failpoint.ErrDisabled:
		return nil
	default:
		panic(fmt.Sprintf("faults: failpath %s: unexpected %v", ts.path, err))
	}
	i, ok := v.(int)
	if !ok || i < 0 || i >= len(ts.chain) {
		panic(fmt.Sprintf("faults: failpath %s answered %v, not a term of %q", ts.path, v, ts.terms))
	}
	return &ts.chain[i]
}

// sleepCtx sleeps d, or less when ctx ends first (then it returns
// ctx.Err()); the sleep counts as the injector's harness time
// (HarnessTime).
func (i *Injector) sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	defer i.clock.begin()()
	return ctxtime.Sleep(ctx, d)
}

// mustDisable disables a failpath conform enabled. The library returns an
// error only for a failpath it never saw, which would be a bug here.
func mustDisable(path string) {
	if err := failpoint.Disable(path); err != nil {
		panic(fmt.Sprintf("faults: disable %s: %v", path, err))
	}
}

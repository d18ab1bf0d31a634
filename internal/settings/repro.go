package settings

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/faults"
)

// Repro names one run again exactly: the seed, the row (or "" for every
// row), the failpoint terms armed, and the store (for the command). Its
// String form is the one-line repro a failure ends with; ParseRepro reads
// it back.
type Repro struct {
	Seed       uint64
	Row        string
	Failpoints []string
	Store      string
	// Fences, when not empty, makes the repro a fences run's: the fence
	// implementation `conform fences` certified (Options.Fences), "self"
	// or "exec:PROGRAM ARGS". Such a repro names no store.
	Fences string
	// Hist, when not nil, names one history of the exploration chapter
	// (hist=N): the run plays that history alone, of the run's seed.
	Hist *int
	// History, when not empty, is one history of the exploration chapter
	// as the chapter shrank it (history=h1…, explore.EncodeRepro): the run
	// replays it exactly, twice, instead of regenerating history Hist. A
	// history whose encoding is longer than a repro value may be is left
	// out, and the repro names it by Hist alone.
	History string
}

const reproVersion = "v1"

// String renders the repro token: `v1;seed=42;row=kill;fp=…;store=…;hist=N;history=h1…`, with
// values query-escaped so that terms and URLs survive a shell's single
// quotes. A fences run's token carries fences=… in place of store=….
func (r Repro) String() string {
	parts := []string{reproVersion, "seed=" + strconv.FormatUint(r.Seed, 10)}
	if r.Row != "" {
		parts = append(parts, "row="+url.QueryEscape(r.Row))
	}
	for _, fp := range r.Failpoints {
		parts = append(parts, "fp="+url.QueryEscape(fp))
	}
	if r.Store != "" && r.Fences == "" {
		parts = append(parts, "store="+url.QueryEscape(r.Store))
	}
	if r.Fences != "" {
		parts = append(parts, "fences="+url.QueryEscape(r.Fences))
	}
	if r.Hist != nil {
		parts = append(parts, "hist="+strconv.Itoa(*r.Hist))
	}
	if r.History != "" && len(r.History) <= MaxRepro {
		parts = append(parts, "history="+url.QueryEscape(r.History))
	}
	return strings.Join(parts, ";")
}

// ParseRepro reads a repro token, refusing anything it does not know with
// an error that names the part.
func ParseRepro(s string) (Repro, error) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ";")
	if len(parts) == 0 || parts[0] != reproVersion {
		return Repro{}, fmt.Errorf("repro %q: it must start with %q", s, reproVersion)
	}
	var r Repro
	seenSeed := false
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return Repro{}, fmt.Errorf("repro: part %q is not key=value", p)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return Repro{}, fmt.Errorf("repro: part %q: %v", p, err)
		}
		if err := checkReproText(k, val); err != nil {
			return Repro{}, err
		}
		switch k {
		case "seed":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return Repro{}, fmt.Errorf("repro: seed %q is not a number", val)
			}
			r.Seed, seenSeed = n, true
		case "row":
			r.Row = val
		case "fp":
			if _, _, err := faults.ParseFailpointFlag(val); err != nil {
				return Repro{}, fmt.Errorf("repro: %v", err)
			}
			r.Failpoints = append(r.Failpoints, val)
		case "store":
			r.Store = val
		case "fences":
			if _, err := FencesCommand(val); err != nil {
				return Repro{}, fmt.Errorf("repro: %v", err)
			}
			r.Fences = val
		case "hist":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return Repro{}, fmt.Errorf("repro: hist %q is not a history's number", val)
			}
			r.Hist = &n
		case "history":
			if !strings.HasPrefix(val, "h1.") {
				return Repro{}, fmt.Errorf("repro: history %.24q…: not a history (it starts with h1.)", val)
			}
			r.History = val
		default:
			return Repro{}, fmt.Errorf("repro: unknown part %q", k)
		}
	}
	if !seenSeed {
		return Repro{}, fmt.Errorf("repro %q: no seed", s)
	}
	return r, nil
}

// MaxRepro bounds one value of a repro string, in bytes.
const MaxRepro = 4096

// checkReproText refuses a value no parser should see: invalid UTF-8, a
// control character, or more than MaxRepro bytes.
func checkReproText(key, val string) error {
	switch {
	case len(val) > MaxRepro:
		return fmt.Errorf("repro: %s: %d bytes, more than %d", key, len(val), MaxRepro)
	case !utf8.ValidString(val):
		return fmt.Errorf("repro: %s %q: not valid UTF-8", key, val)
	}
	for _, r := range val {
		if unicode.IsControl(r) {
			return fmt.Errorf("repro: %s %q: control character %U", key, val, r)
		}
	}
	return nil
}

// ReproLine is the line a failure ends with: the command that runs it again,
// and the go test form. A fences run's line (Fences set) has no go test
// form: its chapter runs under `conform fences` alone.
func ReproLine(r Repro) string {
	tok := r.String()
	if r.Fences != "" {
		return fmt.Sprintf("conform reproduce '%s'", tok)
	}
	return fmt.Sprintf("conform reproduce '%s'   (under go test: CONFORM_REPRO='%s' go test ./...)", tok, tok)
}

// FencesName returns the fence implementation r names: its fences, or
// "self".
func (r Repro) FencesName() string {
	if r.Fences == "" {
		return "self"
	}
	return r.Fences
}

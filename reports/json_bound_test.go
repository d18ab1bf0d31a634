package reports

import (
	"io"
	"strings"
	"testing"
)

// endless is a reader that never ends, counting what it gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadJSONReadsAtMostItsBound: a reader that never ends (a link to
// /dev/zero) is refused once the bound is read, not read on.
func TestReadJSONReadsAtMostItsBound(t *testing.T) {
	var e endless
	const max = 1 << 20
	if _, err := readJSON(&e, max); err == nil || !strings.Contains(err.Error(), "the most a report may hold") {
		t.Fatalf("readJSON of an endless input = %v, want it refused at its bound", err)
	}
	if e.n > max+64<<10 {
		t.Errorf("readJSON read %d bytes of an endless input, bound %d", e.n, max)
	}
	in := `{"schema": 2, "tool": "conform"}`
	if _, err := readJSON(io.LimitReader(strings.NewReader(in), int64(len(in))), int64(len(in))); err != nil {
		t.Errorf("a report of exactly the bound is refused: %v", err)
	}
}

// TestReadJSONRefusesAnUnknownVerdict: the verdict a report records is
// one of those conform gives, or the report is refused.
func TestReadJSONRefusesAnUnknownVerdict(t *testing.T) {
	if _, err := ReadJSON(strings.NewReader(`{"schema": 2, "verdict": "certified-by-me"}`)); err == nil || !strings.Contains(err.Error(), `verdict "certified-by-me"`) {
		t.Errorf("ReadJSON of an unknown verdict = %v, want it refused naming the verdict", err)
	}
	for _, v := range []Verdict{VerdictConformant, VerdictConformantWithoutInStore, VerdictNotConformant, VerdictInterrupted, VerdictEmpty} {
		if _, err := ReadJSON(strings.NewReader(`{"schema": 2, "verdict": "` + string(v) + `"}`)); err != nil {
			t.Errorf("ReadJSON of verdict %s: %v", v, err)
		}
	}
}

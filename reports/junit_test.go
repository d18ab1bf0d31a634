package reports

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
)

// parsedJUnit is what a CI system reads of junit.xml.
type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Skipped    int    `xml:"skipped,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, run *Run) (parsedJUnit, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := writeJUnit(&buf, run); err != nil {
		t.Fatalf("writeJUnit: %v", err)
	}
	var p parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &p); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, buf.String())
	}
	return p, buf.String()
}

func TestJUnitParsesAndCounts(t *testing.T) {
	run := sampleRun()
	p, raw := parseJUnit(t, run)
	// Failed rows and a selected row not exercised fail; the row the
	// selection left out is skipped.
	if p.Tests != len(run.Rows) || p.Failures != 3 || p.Skipped != 1 || p.Errors != 0 {
		t.Errorf("totals tests=%d failures=%d skipped=%d errors=%d, want %d 3 1 0",
			p.Tests, p.Failures, p.Skipped, p.Errors, len(run.Rows))
	}
	if p.Time != "9.000" {
		t.Errorf("root time = %q, want 9.000", p.Time)
	}
	if len(p.Suites) != 2 || p.Suites[0].Name != "host-store" || p.Suites[1].Name != "long-run" {
		t.Fatalf("suites = %+v, want host-store then long-run", p.Suites)
	}
	hs := p.Suites[0]
	if hs.Tests != 6 || len(hs.Cases) != 6 || hs.Failures != 3 || hs.Skipped != 1 {
		t.Errorf("host-store suite tests=%d cases=%d failures=%d skipped=%d, want 6 6 3 1", hs.Tests, len(hs.Cases), hs.Failures, hs.Skipped)
	}
	props := map[string]string{}
	for _, pr := range hs.Properties {
		props[pr.Name] = pr.Value
	}
	if props["seed"] != "42" || props["store"] != run.Store || props["failpoint"] != "commitHold=pause" {
		t.Errorf("properties = %v, want seed, store and failpoint", props)
	}
	kill := hs.Cases[2]
	if kill.Classname != "host-store" || kill.Name != "Kill spec" || kill.Time != "1.500" || kill.Failure == nil {
		t.Fatalf("kill testcase = %+v", kill)
	}
	for _, want := range []string{"ob:1 All or nothing", "expected: head record/b at version 3", "got:      head record/b at version 2",
		"-record/b v3", "commit(c-1) = Ok", "at chapters/kill.go:88", "repro: conform reproduce --seed 42 --row kill"} {
		if !strings.Contains(kill.Failure.Body, want) {
			t.Errorf("kill failure body lacks %q:\n%s", want, kill.Failure.Body)
		}
	}
	stale := hs.Cases[3]
	if stale.Failure == nil || !strings.Contains(stale.Failure.Message, "(and 1 more)") || stale.Failure.Type != "ob:5" {
		t.Errorf("stale-fence failure = %+v", stale.Failure)
	}
	if f := hs.Cases[4].Failure; f == nil || f.Type != "not-exercised" || !strings.Contains(f.Message, "hold a commit in flight: the store has no in-store failpoints") {
		t.Errorf("not-exercised testcase failure = %+v", f)
	}
	if s := hs.Cases[5].Skipped; s == nil || !strings.HasPrefix(s.Message, "not selected") {
		t.Errorf("not-selected testcase skipped = %+v", s)
	}
	declared := run.clone()
	declared.WithoutInStoreFaults = true
	declared.Rows[4].InStoreOnly = true
	p, _ = parseJUnit(t, declared)
	if s := p.Suites[0].Cases[4].Skipped; s == nil || !strings.HasPrefix(s.Message, "not exercised, as declared") {
		t.Errorf("a declared gap is not skipped as declared: %+v", s)
	}
	if !strings.HasPrefix(raw, xml.Header) {
		t.Error("junit.xml lacks the XML header")
	}
}

func TestJUnitHostile(t *testing.T) {
	run := hostileRun()
	p, raw := parseJUnit(t, run)
	if p.Tests != 3 || p.Failures != 2 || p.Skipped != 0 || p.Errors != 1 {
		t.Errorf("totals tests=%d failures=%d skipped=%d errors=%d, want 3 2 0 1", p.Tests, p.Failures, p.Skipped, p.Errors)
	}
	assertNoControl(t, "junit.xml", raw)
	if len(raw) > 400<<10 {
		t.Errorf("junit.xml is %d bytes for hostile input; want it bounded", len(raw))
	}
	f := p.Suites[0].Cases[0].Failure
	if f == nil || !strings.Contains(f.Body, "<script>alert(1)</script> | `tick`") || !strings.Contains(f.Body, "]]> end") {
		t.Error("the failure body does not read back the store's text")
	}
}

// assertNoControl fails if s holds a control byte other than \n and \t.
func assertNoControl(t *testing.T, name, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			t.Fatalf("%s holds control byte %s at %d: %q", name, strconv.QuoteRune(rune(c)), i, s[max(0, i-20):min(len(s), i+20)])
		}
	}
}

package reports

import (
	"strings"
	"testing"
	"time"
)

func TestClipTail(t *testing.T) {
	if got, want := clipTail("abcdef", 2), "(4 bytes cut) …ef"; got != want {
		t.Errorf("clipTail = %q, want %q", got, want)
	}
	if got, want := clipTail("aé", 1), "(3 bytes cut) …"; got != want {
		t.Errorf("clipTail split a rune: %q, want %q", got, want)
	}
}

func TestVisible(t *testing.T) {
	in := "ok \x00\x1b[31m\r\x7f\u0085\u202e\xff é\n\t"
	want := `ok \x00\x1b[31m\r\x7f\u0085\u202e\xff é` + "\n\t"
	if got := visible(in); got != want {
		t.Errorf("visible(%q) = %q, want %q", in, got, want)
	}
	if got := visible("plain\ntext"); got != "plain\ntext" {
		t.Errorf("visible changed clean text: %q", got)
	}
}

func TestTrailKeepsTheEnd(t *testing.T) {
	lines := make([]string, trailMax+5)
	for i := range lines {
		lines[i] = strings.Repeat("x", i%3)
	}
	lines[len(lines)-1] = "last"
	kept, dropped := trail(lines)
	if dropped != 5 || len(kept) != trailMax || kept[len(kept)-1] != "last" {
		t.Errorf("trail kept %d, dropped %d, last %q; want %d, 5, \"last\"", len(kept), dropped, kept[len(kept)-1], trailMax)
	}
}

func TestDuration(t *testing.T) {
	cases := map[time.Duration]string{
		350 * time.Microsecond:   "350µs",
		12345 * time.Microsecond: "12.35ms",
		1234 * time.Millisecond:  "1.23s",
		125 * time.Second:        "2m5s",
		0:                        "0s",
	}
	for d, want := range cases {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", int64(d), got, want)
		}
	}
}

func TestConformantAndCounts(t *testing.T) {
	r := sampleRun()
	if r.conformant() {
		t.Error("a run with failed rows is conformant")
	}
	c := r.Counts()
	// The fixture's not-run row is one the label filter left out: counted
	// apart, not as not run.
	want := map[Status]int{StatusPassed: 3, StatusFailed: 2, StatusNotExercised: 1, StatusNotRun: 0}
	for s, n := range want {
		if c[s] != n {
			t.Errorf("Counts()[%s] = %d, want %d", s, c[s], n)
		}
	}
	if n := r.notSelectedCount(); n != 1 {
		t.Errorf("notSelectedCount() = %d, want 1", n)
	}
	p := passingRun()
	if !p.conformant() {
		t.Error("a run with only passed rows is not conformant")
	}
	if n, ok := p.Counts()[StatusFailed]; !ok || n != 0 {
		t.Errorf("Counts() lacks a zero for failed: %d, %v", n, ok)
	}
	p.Interrupted = true
	if p.conformant() {
		t.Error("an interrupted run is conformant")
	}
	u := passingRun()
	u.Rows[0].Status = "weird"
	if u.conformant() {
		t.Error("a run with an unknown row status is conformant")
	}
	if u.Counts()["weird"] != 1 {
		t.Error("Counts() does not count an unknown status")
	}
}

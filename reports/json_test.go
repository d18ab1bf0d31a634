package reports

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	run := sampleRun()
	var buf bytes.Buffer
	if err := writeJSON(&buf, run); err != nil {
		t.Fatalf("writeJSON: %v", err)
	}
	got, err := ReadJSON(&buf)
	if err != nil {
		t.Fatalf("ReadJSON: %v", err)
	}
	if !reflect.DeepEqual(got, run) {
		t.Errorf("round trip changed the run:\ngot  %+v\nwant %+v", got, run)
	}
}

func TestWriteJSONFillsSchemaAndEmptyLists(t *testing.T) {
	run := &Run{Rows: []Row{{ID: "r", Status: StatusPassed}}}
	var buf bytes.Buffer
	if err := writeJSON(&buf, run); err != nil {
		t.Fatalf("writeJSON: %v", err)
	}
	s := buf.String()
	for _, want := range []string{`"schema": 2`, `"verdict": "conformant"`, `"obligations": []`, `"labels": []`, `"duration_ns": 0`} {
		if !strings.Contains(s, want) {
			t.Errorf("report.json lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "null") {
		t.Errorf("report.json holds null:\n%s", s)
	}
	if run.Schema != 0 || run.Rows[0].Labels != nil {
		t.Error("writeJSON modified its run")
	}
}

func TestWriteJSONRefusesOtherSchema(t *testing.T) {
	err := writeJSON(&bytes.Buffer{}, &Run{Schema: 7})
	if err == nil || !strings.Contains(err.Error(), "schema 7") {
		t.Errorf("writeJSON of schema 7 = %v, want an error naming schema 7", err)
	}
}

func TestReadJSONRefuses(t *testing.T) {
	cases := map[string]string{
		`{"schema": 3, "rows": []}`:   "report schema 3 is not supported",
		`{"schema": 1, "rows": []}`:   "report schema 1 is not supported",
		`{"schema": 0}`:               "report schema 0 is not supported",
		`{"tool": "conform"}`:         "no schema field",
		`not json`:                    "not a conform report",
		`{"schema": 2} {"schema": 2}`: "not a conform report",
		`{"schema": 2, "seed": "x"}`:  "schema 2 report",
		`[1, 2]`:                      "not a conform report",
	}
	for in, want := range cases {
		_, err := ReadJSON(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadJSON(%s) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestReadJSONIgnoresNewFields(t *testing.T) {
	run, err := ReadJSON(strings.NewReader(`{"schema": 2, "tool": "conform", "shiny": true}`))
	if err != nil || run.Tool != "conform" {
		t.Errorf("ReadJSON with an added field = %+v, %v", run, err)
	}
}

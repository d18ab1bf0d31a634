package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// writeJSON writes run as indented JSON in the report.json schema
// (SchemaVersion). It keeps every field whole: the JSON report is the data a
// failed run keeps, not a page to read. A run whose Schema is zero is written
// as SchemaVersion; a run carrying another schema is refused. Nil lists that
// the schema requires (obligations, rows, a row's labels and obligations) are
// written as [] so readers need not tell null from empty. Text is written as
// JSON strings, so invalid UTF-8 becomes U+FFFD; the harness formats payload
// bytes (textsafe.Payload) first. run is not modified.
func writeJSON(w io.Writer, run *Run) error {
	if run == nil {
		return errors.New("reports: write json: nil run")
	}
	out := *run
	if out.Schema == 0 {
		out.Schema = SchemaVersion
	}
	if out.Schema != SchemaVersion {
		return fmt.Errorf("reports: write json: run has schema %d; this writer knows only schema %d", out.Schema, SchemaVersion)
	}
	if out.Obligations == nil {
		out.Obligations = []Obligation{}
	}
	out.Rows = make([]Row, len(run.Rows))
	for i, row := range run.Rows {
		if row.Labels == nil {
			row.Labels = []string{}
		}
		if row.Obligations == nil {
			row.Obligations = []ObligationID{}
		}
		out.Rows[i] = row
	}
	// The verdict and its reasons are written for readers of the file; a
	// Run computes them again from its rows.
	doc := struct {
		Run
		Verdict Verdict  `json:"verdict"`
		Reasons []string `json:"reasons,omitempty"`
	}{out, run.Verdict(), run.Reasons()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("reports: write json: %w", err)
	}
	return nil
}

// MaxJSONSize is the most bytes ReadJSON reads: 512 MiB. The largest
// campaign (10 million histories) writes a report of about 280 MB.
const MaxJSONSize = 512 << 20

// ReadJSON reads a report.json that WriteAll wrote. It refuses, with an
// error that says so, input that is not JSON, has no schema field, or carries
// a schema other than SchemaVersion (a report from a newer or older conform),
// a verdict none of the Verdict constants names, input with anything after
// the report, and input longer than MaxJSONSize (it reads no further). Fields
// it does not know are ignored, so a report that only gained fields stays
// readable.
func ReadJSON(r io.Reader) (*Run, error) { return readJSON(r, MaxJSONSize) }

// readJSON is ReadJSON reading at most max bytes. A regular file that
// says its size is read into a buffer of that size, not one grown by
// doubling.
func readJSON(r io.Reader, max int64) (*Run, error) {
	var buf bytes.Buffer
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= max {
			buf.Grow(int(fi.Size()) + bytes.MinRead)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, max+1)); err != nil {
		return nil, fmt.Errorf("reports: read json: %w", err)
	}
	data := buf.Bytes()
	if int64(len(data)) > max {
		return nil, fmt.Errorf("reports: read json: more than %d bytes, the most a report may hold", max)
	}
	var probe struct {
		Schema  *int     `json:"schema"`
		Verdict *Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("reports: read json: not a conform report: %w", err)
	}
	if probe.Schema == nil {
		return nil, errors.New("reports: read json: not a conform report: no schema field")
	}
	if *probe.Schema != SchemaVersion {
		return nil, fmt.Errorf("reports: read json: report schema %d is not supported; this reader knows only schema %d", *probe.Schema, SchemaVersion)
	}
	if v := probe.Verdict; v != nil && !v.known() {
		return nil, fmt.Errorf("reports: read json: verdict %q is not one conform gives", string(*v))
	}
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, fmt.Errorf("reports: read json: schema %d report: %w", SchemaVersion, err)
	}
	return &run, nil
}

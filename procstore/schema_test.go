package procstore_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// schema checks JSON values against the subset of JSON Schema (2020-12)
// that docs/store-process-protocol.schema.json uses. A keyword outside the
// subset is an error, so the schema cannot grow past what this checks.
type schema struct{ root map[string]any }

func loadSchema(path string) (*schema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := decodeJSON(raw, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &schema{root: root}, nil
}

func decodeJSON(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// check validates a line against the definition def ("" for the root).
func (s *schema) check(line []byte, def string) error {
	var v any
	if err := decodeJSON(line, &v); err != nil {
		return err
	}
	var sch any = s.root
	if def != "" {
		var err error
		if sch, err = s.ref("#/$defs/" + def); err != nil {
			return err
		}
	}
	return s.validate(v, sch, "$")
}

func (s *schema) ref(r string) (any, error) {
	name, ok := strings.CutPrefix(r, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only #/$defs/NAME is supported", r)
	}
	defs, _ := s.root["$defs"].(map[string]any)
	d, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such definition", r)
	}
	return d, nil
}

var annotations = map[string]bool{"$schema": true, "$id": true, "title": true, "description": true, "$defs": true}

func (s *schema) validate(v any, sch any, at string) error {
	m, ok := sch.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is %T, not an object", at, sch)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := s.keyword(v, k, m[k], m, at); err != nil {
			return err
		}
	}
	return nil
}

func (s *schema) keyword(v any, k string, arg any, m map[string]any, at string) error {
	switch k {
	case "$ref":
		d, err := s.ref(arg.(string))
		if err != nil {
			return err
		}
		return s.validate(v, d, at)
	case "anyOf", "oneOf", "allOf":
		n, errs := 0, []string{}
		for _, sub := range arg.([]any) {
			if err := s.validate(v, sub, at); err != nil {
				errs = append(errs, err.Error())
			} else {
				n++
			}
		}
		all := len(arg.([]any))
		switch {
		case k == "anyOf" && n == 0, k == "allOf" && n < all:
			return fmt.Errorf("%s: %s: %s", at, k, strings.Join(errs, "; "))
		case k == "oneOf" && n != 1:
			return fmt.Errorf("%s: oneOf: %d of %d match: %s", at, n, all, strings.Join(errs, "; "))
		}
	case "type":
		if !hasType(v, arg.(string)) {
			return fmt.Errorf("%s: %s, want type %s", at, show(v), arg)
		}
	case "enum":
		for _, e := range arg.([]any) {
			if reflect.DeepEqual(v, e) {
				return nil
			}
		}
		return fmt.Errorf("%s: %s is not one of %v", at, show(v), arg)
	case "const":
		if !sameValue(v, arg) {
			return fmt.Errorf("%s: %s, want %v", at, show(v), arg)
		}
	case "properties":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for name, sub := range arg.(map[string]any) {
			if x, ok := obj[name]; ok {
				if err := s.validate(x, sub, at+"."+name); err != nil {
					return err
				}
			}
		}
	case "required":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, name := range arg.([]any) {
			if _, ok := obj[name.(string)]; !ok {
				return fmt.Errorf("%s: no %q", at, name)
			}
		}
	case "items":
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, x := range arr {
			if err := s.validate(x, arg, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "minItems":
		if arr, ok := v.([]any); ok && int64(len(arr)) < intArg(arg) {
			return fmt.Errorf("%s: %d items, want at least %v", at, len(arr), arg)
		}
	case "minLength":
		if str, ok := v.(string); ok && int64(len([]rune(str))) < intArg(arg) {
			return fmt.Errorf("%s: %q is shorter than %v", at, str, arg)
		}
	case "minimum":
		if n, ok := v.(json.Number); ok {
			x, _ := new(big.Float).SetString(n.String())
			min, _ := new(big.Float).SetString(arg.(json.Number).String())
			if x == nil || x.Cmp(min) < 0 {
				return fmt.Errorf("%s: %s is below %s", at, n, arg)
			}
		}
	case "contentEncoding":
		if arg != "base64" {
			return fmt.Errorf("%s: contentEncoding %v is not supported", at, arg)
		}
		if str, ok := v.(string); ok {
			if _, err := base64.StdEncoding.Strict().DecodeString(str); err != nil {
				return fmt.Errorf("%s: %q is not standard base64: %v", at, str, err)
			}
		}
	default:
		if !annotations[k] {
			return fmt.Errorf("%s: schema keyword %q is outside the subset this validator checks", at, k)
		}
	}
	return nil
}

func intArg(a any) int64 {
	n, _ := a.(json.Number).Int64()
	return n
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, ok = new(big.Int).SetString(n.String(), 10)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return false
}

func sameValue(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		bx, ok1 := new(big.Float).SetString(x.String())
		by, ok2 := new(big.Float).SetString(y.String())
		return ok1 && ok2 && bx.Cmp(by) == 0
	}
	return reflect.DeepEqual(a, b)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

// TestSchemaValidatorRejects shows the validator can fail: a message of
// each direction that breaks the schema in one way.
func TestSchemaValidatorRejects(t *testing.T) {
	s, err := loadSchema("../docs/store-process-protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	good := []struct{ def, line string }{
		{"harness_message", `{"id":0,"op":"hello","versions":[1]}`},
		{"harness_message", `{"id":3,"op":"commit","batch":{"commit_id":"c","token":1,"updates":[{"scope":{"kind":"Mob","name":"m"},"previous":null,"next":1,"head":"aGk=","append":[]}]}}`},
		{"harness_message", `{"call":2,"ok":{}}`},
		{"store_message", `{"id":4,"error":{"kind":"conflict","scope":{"kind":"Record","name":"r"},"current":null}}`},
		{"store_message", `{"call":0,"op":"at","req":3,"site":"commit-locked","commit_id":"c"}`},
		{"list_heads_result", `{"heads":[{"name":"a","version":1,"commit_id":"c","head":""}],"next":null}`},
	}
	for _, g := range good {
		if err := s.check([]byte(g.line), g.def); err != nil {
			t.Errorf("%s %s: %v", g.def, g.line, err)
		}
	}
	bad := []struct{ def, line string }{
		{"harness_message", `{"id":1,"op":"hello","versions":[1]}`},
		{"harness_message", `{"id":1,"op":"acquire_fence","mode":"shared"}`},
		{"harness_message", `{"id":-1,"op":"renew_fence","token":1}`},
		{"harness_message", `{"id":3,"op":"commit","batch":{"commit_id":"c","token":1,"updates":[{"scope":{"kind":"Mob","name":"m"},"next":1,"head":"not base64!"}]}}`},
		{"store_message", `{"id":4,"ok":{},"error":{"kind":"invalid","detail":"x"}}`},
		{"store_message", `{"id":4,"error":{"kind":"held","holder":1}}`},
		{"store_message", `{"id":4}`},
		{"store_message", `{"call":0,"op":"at","req":3,"site":"commit-somewhere","commit_id":"c"}`},
		{"load_head_result", `{"head":{"version":0,"commit_id":"c","head":""}}`},
		{"read_rows_result", `{"rows":[{"index":1.5,"data":""}]}`},
	}
	for _, b := range bad {
		if err := s.check([]byte(b.line), b.def); err == nil {
			t.Errorf("%s %s: valid, want an error", b.def, b.line)
		}
	}
}

package faults

import "github.com/pingcap/failpoint"

// envDisabled lists conform's failpaths that GO_FAILPOINTS had enabled and
// init disabled, with the terms they had; for messages and tests.
var envDisabled []string

// init disables conform's failpaths that pingcap/failpoint enabled from
// GO_FAILPOINTS before this package ran. Terms reach conform's failpaths
// only through this package (validated, with errors instead of the
// library's exit); left enabled, such terms would be evaluated by the
// library on every instore.At while anything is armed, where a `pause`
// would hang the commit for good.
func init() {
	for _, p := range failpoint.List() {
		if _, ok := Lookup(p); !ok {
			continue
		}
		terms, err := failpoint.Status(p)
		if err != nil {
			continue // listed but disabled: nothing to undo
		}
		mustDisable(p)
		envDisabled = append(envDisabled, p+"="+terms)
	}
}

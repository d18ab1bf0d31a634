package spec

import "github.com/onsi/ginkgo/v2/types"

// ParseFilter returns the match of label filter f, in Ginkgo's syntax
// ("row:kill || ob:2"); nil for an empty f, which selects every spec.
func ParseFilter(f string) (func(labels []string) bool, error) {
	if f == "" {
		return nil, nil
	}
	m, err := types.ParseLabelFilter(f)
	if err != nil {
		return nil, err
	}
	return m, nil
}

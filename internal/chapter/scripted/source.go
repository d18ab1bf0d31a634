package scripted

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strings"
)

// Rand returns a random source that follows from seed and parts alone, so
// a script's fakes answer the same in every process and in the reference.
func Rand(seed uint64, parts ...string) *rand.Rand {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return rand.New(rand.NewPCG(seed^binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])))
}

// Fill returns n random lower-case letters from r.
func Fill(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return b
}

package writer

import (
	"bytes"
	"errors"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

func TestDecodeRoundTrip(t *testing.T) {
	inline, ref, err := Decode(encodeInline([]byte("hello")))
	if err != nil || ref != nil || string(inline) != "hello" {
		t.Fatalf("Decode(inline) = %q, %v, %v", inline, ref, err)
	}
	d := digest([]byte("big"))
	name := chunkName("c/", d, "t1-1")
	inline, ref, err = Decode(encodeRef(d, 3, name))
	if err != nil || inline != nil || ref == nil {
		t.Fatalf("Decode(ref) = %q, %v, %v", inline, ref, err)
	}
	if ref.Scope != (hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: name}) || ref.Digest != d || ref.Length != 3 {
		t.Fatalf("Decode(ref) = %+v", ref)
	}
	if n, ok := Refs(encodeRef(d, 3, name)); !ok || n != name {
		t.Fatalf("Refs = %q, %v", n, ok)
	}
	if !IsChunk("c/", ref.Scope) || IsChunk("c/", hoststore.ScopeRef{Kind: hoststore.KindSession, Name: name}) {
		t.Fatal("IsChunk: a Record scope under the prefix is a chunk; a Session scope is not")
	}
	if !IsChunk("", hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: DefaultChunkPrefix + "x"}) {
		t.Fatal(`IsChunk("") uses the default prefix`)
	}
}

func TestDecodeRefusesForeignHeads(t *testing.T) {
	for _, h := range [][]byte{nil, []byte("probe"), append([]byte{tagChunked}, make([]byte, 10)...), append(append([]byte{tagChunked}, make([]byte, refLen-1)...), 0x01)} {
		var fe *FormatError
		if _, _, err := Decode(h); !errors.As(err, &fe) {
			t.Errorf("Decode(%q) = %v, want a *FormatError", h, err)
		}
		if _, ok := Refs(h); ok {
			t.Errorf("Refs(%q) found a chunk", h)
		}
	}
	if v, _, _ := Decode(encodeInline(nil)); v == nil || !bytes.Equal(v, []byte{}) {
		t.Errorf("an empty inline value decodes to %v, want an empty value", v)
	}
}

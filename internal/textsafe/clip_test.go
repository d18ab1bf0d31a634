package textsafe

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	cases := []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abcdef", 3, "abc… (3 bytes cut)"},
		{"abc", 0, "… (3 bytes cut)"},
		{"abc", -1, "… (3 bytes cut)"},
		{"héllo", 2, "h… (5 bytes cut)"}, // é is two bytes: never split
		{"日本語", 4, "日… (6 bytes cut)"},
		{"", 0, ""},
	}
	for _, c := range cases {
		if got := Clip(c.s, c.max); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

func TestPayload(t *testing.T) {
	long := strings.Repeat("a", 100)
	binLong := strings.Repeat("\xff", 100)
	cases := []struct {
		b    []byte
		want string
	}{
		{nil, `""`},
		{[]byte{}, `""`},
		{[]byte("hello"), `"hello"`},
		{[]byte("a\nb\t\"c\""), `"a\nb\t\"c\""`},
		{[]byte("héllo"), `"héllo"`},
		{[]byte{0, 1, 0xff}, "0x0001ff"},
		{[]byte("ok\x1b[31m"), "0x6f6b1b5b33316d"}, // a control character makes it binary
		{[]byte("\xff\xfe"), "0xfffe"},             // invalid UTF-8
		{[]byte(long), `"` + long[:64] + `"… (100 bytes)`},
		{[]byte(strings.Repeat("a", 63) + "é"), `"` + strings.Repeat("a", 63) + `"… (65 bytes)`},
		{[]byte(binLong), "0x" + strings.Repeat("ff", 64) + "… (100 bytes)"},
		{[]byte(long[:64]), `"` + long[:64] + `"`},
	}
	for _, c := range cases {
		if got := Payload(c.b); got != c.want {
			t.Errorf("Payload(%q) = %s, want %s", c.b, got, c.want)
		}
	}
}

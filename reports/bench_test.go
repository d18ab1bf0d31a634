package reports

import (
	"io"
	"testing"
)

func BenchmarkWriteAllSample(b *testing.B) {
	dir := b.TempDir()
	run := sampleRun()
	for b.Loop() {
		if err := WriteAll(dir, run); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteHTMLHostile(b *testing.B) {
	run := hostileRun()
	for b.Loop() {
		if err := writeHTML(io.Discard, run); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteMarkdownHostile(b *testing.B) {
	run := hostileRun()
	for b.Loop() {
		if err := writeMarkdown(io.Discard, run); err != nil {
			b.Fatal(err)
		}
	}
}

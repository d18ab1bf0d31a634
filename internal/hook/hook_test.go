package hook

import (
	"context"
	"errors"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

func TestSetAndCall(t *testing.T) {
	if Installed() {
		t.Fatal("the slot holds a handler before any Set")
	}
	if err := Call(context.Background(), "commit-locked", "c1"); err != nil {
		t.Fatalf("Call with the slot empty = %v, want nil", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Call(context.Background(), "commit-locked", "c1") }); n != 0 {
		t.Fatalf("Call with the slot empty allocates %v times, want 0", n)
	}

	first := errors.New("first")
	var got string
	Set(func(_ context.Context, site string, id hoststore.CommitID) error {
		got = site + "/" + string(id)
		return first
	})
	if !Installed() {
		t.Fatal("Installed after Set = false")
	}
	if err := Call(context.Background(), "commit-locked", "c1"); err != first || got != "commit-locked/c1" {
		t.Fatalf("Call = %v with %q, want the handler's error with commit-locked/c1", err, got)
	}

	// A second Set replaces the first handler.
	Set(func(context.Context, string, hoststore.CommitID) error { return nil })
	if err := Call(context.Background(), "commit-locked", "c2"); err != nil || got != "commit-locked/c1" {
		t.Fatalf("Call after a second Set = %v, first handler saw %q; want nil from the second handler only", err, got)
	}

	Set(nil)
	if Installed() {
		t.Fatal("Installed after Set(nil) = true")
	}
	if err := Call(context.Background(), "commit-locked", "c3"); err != nil {
		t.Fatalf("Call after Set(nil) = %v, want nil", err)
	}
}

package hook

import (
	"context"
	"errors"
	"fmt"
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

// fakeInjector records its calls and claims the ids in claims.
type fakeInjector struct {
	name   string
	claims map[hoststore.CommitID]bool
	armed  bool
	calls  []string
}

func (f *fakeInjector) At(_ context.Context, site string, id hoststore.CommitID) error {
	f.calls = append(f.calls, site+"/"+string(id))
	return nil
}

func (f *fakeInjector) Claims(id hoststore.CommitID) bool { return f.claims[id] }

func (f *fakeInjector) Armed() bool { return f.armed }

func TestCallFindsTheInjector(t *testing.T) {
	a := &fakeInjector{name: "a", claims: map[hoststore.CommitID]bool{"ca": true}, armed: true}
	b := &fakeInjector{name: "b", claims: map[hoststore.CommitID]bool{"cb": true, "ca": true}, armed: true}
	unarmed := &fakeInjector{name: "unarmed"}
	bg := context.Background()

	// With the slot empty a context's injector is not even asked.
	if err := Call(With(bg, a), "commit-locked", "x"); err != nil || len(a.calls) != 0 {
		t.Fatalf("Call with the slot empty = %v, a saw %v; want nil and no call", err, a.calls)
	}
	if Armed(With(bg, a)) || Armed(bg) {
		t.Fatal("Armed with the slot empty = true")
	}
	ctxU := With(bg, unarmed)
	if n := testing.AllocsPerRun(100, func() { _ = Call(ctxU, "commit-locked", "c1") }); n != 0 {
		t.Fatalf("Call under a bound context with the slot empty allocates %v times, want 0", n)
	}

	Activate(a)
	Activate(b)
	Activate(a) // once only
	if From(bg) != nil || From(With(bg, b)) != b {
		t.Fatal("From does not return the injector With put in the context")
	}
	// A bound context reaches its injector, armed or not, and no other.
	_ = Call(With(bg, b), "commit-locked", "ca")
	_ = Call(ctxU, "commit-locked", "cb")
	// Without one: the first active injector that claims the id, else
	// none.
	_ = Call(bg, "commit-locked", "ca")
	_ = Call(bg, "commit-locked", "cb")
	if err := Call(bg, "commit-locked", "cz"); err != nil {
		t.Fatalf("Call of a commit no injector claims = %v, want nil", err)
	}
	for _, c := range []struct {
		f    *fakeInjector
		want string
	}{
		{a, "[commit-locked/ca]"},
		{b, "[commit-locked/ca commit-locked/cb]"},
		{unarmed, "[commit-locked/cb]"},
	} {
		if got := fmt.Sprint(c.f.calls); got != c.want {
			t.Errorf("%s saw %s, want %s", c.f.name, got, c.want)
		}
	}
	if !Armed(With(bg, a)) || Armed(ctxU) || !Armed(bg) {
		t.Errorf("Armed: a %v, unarmed %v, no injector %v; want true, false, true", Armed(With(bg, a)), Armed(ctxU), Armed(bg))
	}

	Deactivate(a)
	if !Installed() {
		t.Fatal("b is active and the slot is empty")
	}
	Deactivate(b)
	if Installed() {
		t.Fatal("Installed after every injector left = true")
	}
	if err := Call(bg, "commit-locked", "ca"); err != nil || len(a.calls) != 1 {
		t.Fatalf("Call after every injector left = %v, a saw %v", err, a.calls)
	}
}

func BenchmarkCallEmpty(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := Call(ctx, "commit-locked", "c1"); err != nil {
			b.Fatal(err)
		}
	}
}

//go:build linux || darwin

package admission_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/conform-spi/conform/admission"
)

// exampleLayout returns a Layout whose roots are under root, and makes the
// directories of the user root and of the given realms under the
// credential and state roots. A guard creates fence files, not directories.
func exampleLayout(root string, realms ...string) admission.Layout {
	l := admission.Layout{
		UserRoot:       filepath.Join(root, "user"),
		CredentialRoot: filepath.Join(root, "credentials"),
		StateRoot:      filepath.Join(root, "state"),
	}
	dirs := []string{l.UserRoot}
	for _, realm := range realms {
		name, err := admission.RealmDir(realm)
		if err != nil {
			log.Fatal(err)
		}
		dirs = append(dirs,
			filepath.Join(l.CredentialRoot, admission.RealmsDir, name),
			filepath.Join(l.StateRoot, admission.RealmsDir, name))
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	return l
}

// A writer changes a realm's file under a Guard; an admission reads the
// realm's files under a Hold. While the Hold is held, no writer gets in.
func Example() {
	root, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	l := exampleLayout(root, "ops")
	r, err := l.RealmChain("ops")
	if err != nil {
		log.Fatal(err)
	}
	settings := filepath.Join(r[0].Dir(), "settings.json")

	// The writer: take the realm's fence, write, let go.
	g, err := admission.Install{}.AcquireGuard(time.Second, r[0])
	if err != nil {
		log.Fatal(err)
	}
	if err := admission.WriteFile(g, settings, []byte(`{"open":true}`), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := g.Release(); err != nil {
		log.Fatal(err)
	}

	// The admission: hold the fence while it reads and decides.
	h, err := admission.Install{}.AcquireHold(time.Second, r[0])
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(settings)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the admission reads %s\n", data)

	// Another writer is kept out while the admission holds the fence.
	_, err = admission.Install{}.TryAcquireGuard(r[0])
	fmt.Println("a writer meanwhile:", admission.IsInProgress(err))

	if err := h.Release(); err != nil {
		log.Fatal(err)
	}
	g, err = admission.Install{}.TryAcquireGuard(r[0])
	fmt.Println("a writer afterwards:", err)
	if err == nil {
		g.Release()
	}
	// Output:
	// the admission reads {"open":true}
	// a writer meanwhile: true
	// a writer afterwards: <nil>
}

// A writer that changes a realm's credentials and its state takes C and
// then R in one set, with a bound on how long it waits. Its guard covers
// only the directories of the fences it holds.
func ExampleInstall_AcquireGuard() {
	root, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	l := exampleLayout(root, "ops")
	c, err := l.Credential("ops")
	if err != nil {
		log.Fatal(err)
	}
	r, err := l.RealmChain("ops")
	if err != nil {
		log.Fatal(err)
	}

	g, err := admission.Install{}.AcquireGuard(5*time.Second, c, r[0])
	if err != nil {
		log.Fatal(err)
	}
	defer g.Release()
	for _, f := range g.Fences() {
		fmt.Println("holds", f.Kind(), f.Realm())
	}

	token := filepath.Join(c.Dir(), "token.json")
	fmt.Println("write token:", admission.WriteFile(g, token, []byte("{}"), 0o600))

	// The user root's fence is not in the set, so its files are not covered.
	prefs := filepath.Join(l.UserRoot, "prefs.json")
	err = admission.WriteFile(g, prefs, []byte("{}"), 0o644)
	var uncovered *admission.UncoveredError
	fmt.Println("write prefs refused:", errors.As(err, &uncovered))
	_, statErr := os.Stat(prefs)
	fmt.Println("prefs written:", statErr == nil)
	// Output:
	// holds C ops
	// holds R ops
	// write token: <nil>
	// write prefs refused: true
	// prefs written: false
}

// An admission holds the fences of what it reads in shared mode, so other
// admissions can hold them too. A hold creates no fence: one that does not
// exist yet is skipped, since no writer holds it.
func ExampleInstall_AcquireHold() {
	root, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	l := exampleLayout(root, "ops")
	u := l.User()
	r, err := l.RealmChain("ops")
	if err != nil {
		log.Fatal(err)
	}
	// A writer has written under R before, so its fence exists; U's not.
	g, err := admission.Install{}.TryAcquireGuard(r[0])
	if err != nil {
		log.Fatal(err)
	}
	g.Release()

	first, err := admission.Install{}.AcquireHold(time.Second, u, r[0])
	if err != nil {
		log.Fatal(err)
	}
	defer first.Release()
	second, err := admission.Install{}.TryAcquireHold(u, r[0])
	if err != nil {
		log.Fatal(err)
	}
	defer second.Release()
	for _, f := range second.Skipped() {
		fmt.Println("skipped", f.Kind())
	}
	_, statErr := os.Stat(u.Path())
	fmt.Println("U's fence created:", statErr == nil)
	// Output:
	// skipped U
	// U's fence created: false
}

// The try form never waits. While an admission holds the fence, a writer's
// try is refused at once as in progress, and nothing of its set is held.
func ExampleInstall_TryAcquireGuard() {
	dir, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	doc := admission.DocumentFence(filepath.Join(dir, "grants.json"))
	g, err := admission.Install{}.TryAcquireGuard(doc)
	if err != nil {
		log.Fatal(err)
	}
	g.Release() // the fence file now exists

	h, err := admission.Install{}.TryAcquireHold(doc)
	if err != nil {
		log.Fatal(err)
	}
	_, err = admission.Install{}.TryAcquireGuard(doc)
	var busy *admission.InProgressError
	if errors.As(err, &busy) {
		fmt.Println(busy.Code(), filepath.Base(busy.Path))
	}
	h.Release()
	// Output:
	// ADMISSION_IN_PROGRESS admission.lock
}

// A set lists the user fence first, then credential fences sorted by realm
// id, then the realm fences of one chain, root first (adm:order). A set out
// of order is refused as unavailable, with cause order, before any fence is
// touched.
func ExampleCauseOf() {
	root, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	l := exampleLayout(root, "a", "b")
	ca, err := l.Credential("a")
	if err != nil {
		log.Fatal(err)
	}
	cb, err := l.Credential("b")
	if err != nil {
		log.Fatal(err)
	}

	_, err = admission.Install{}.TryAcquireGuard(cb, ca) // b before a
	cause, ok := admission.CauseOf(err)
	fmt.Println(cause, ok)
	var refusal *admission.UnavailableError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code())
	}
	_, statErr := os.Stat(cb.Path())
	fmt.Println("fence created:", statErr == nil)

	_, err = l.Credential("../b")
	fmt.Println(admission.CauseOf(err))
	// Output:
	// order true
	// ADMISSION_FENCE_UNAVAILABLE
	// fence created: false
	// realm-id true
}

// RealmChain gives the R fences of a composed chain their positions, from
// the chain's root out to its head. A set may hold R fences of one chain
// only.
func ExampleLayout_RealmChain() {
	l := admission.Layout{StateRoot: "/var/lib/example/state"}
	chain, err := l.RealmChain("org", "team a")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range chain {
		fmt.Println(f.Position(), f.Path())
	}
	// Output:
	// 0 /var/lib/example/state/realms/org/admission.lock
	// 1 /var/lib/example/state/realms/team%20a/admission.lock
}

// RealmDir turns a realm id into a single directory name, escaping unusual
// bytes. It refuses an id that would not name exactly one directory.
func ExampleRealmDir() {
	for _, id := range []string{"ops", "team a", "..", "ops/eu"} {
		name, err := admission.RealmDir(id)
		if cause, ok := admission.CauseOf(err); ok {
			fmt.Printf("%q: refused (%s)\n", id, cause)
			continue
		}
		fmt.Printf("%q: %s\n", id, name)
	}
	// Output:
	// "ops": ops
	// "team a": team%20a
	// "..": refused (realm-id)
	// "ops/eu": refused (realm-id)
}

// An install is composed when one of its roots holds ComposedMarker.
func ExampleDetectInstall() {
	root, err := os.MkdirTemp("", "admission-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	in, err := admission.DetectInstall(root)
	fmt.Println(in.Composed, err)
	if err := os.WriteFile(filepath.Join(root, admission.ComposedMarker), []byte("{}"), 0o644); err != nil {
		log.Fatal(err)
	}
	in, err = admission.DetectInstall(filepath.Join(root, "missing"), root)
	fmt.Println(in.Composed, err)
	// Output:
	// false <nil>
	// true <nil>
}

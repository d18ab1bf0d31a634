package fences

import (
	"context"
	"time"

	"github.com/conform-spi/conform/internal/spec"
)

// RowSpec is one row of the chapter as data: a stable ID, its name and the
// obligations it checks. Register adds its spec to the running suite.
type RowSpec struct {
	// ID is a stable lower-case slug; the row's spec carries the label
	// RowLabelPrefix+ID ("row:adm-mode").
	ID string
	// Name is the spec's text.
	Name string
	// Obligations are the IDs of the obligations the row checks; the spec
	// carries "ob:<ID>" for each.
	Obligations []string
	// body runs the row.
	body func(r *rowRun)
}

// RowLabelPrefix prefixes every row ID in the row's label, so that the
// chapter's row IDs cannot collide with another chapter's.
const RowLabelPrefix = "row:adm-"

// Labels returns the row's own labels: its row label, then one "ob:<ID>"
// label for each obligation it checks.
func (s RowSpec) Labels() []string {
	labels := []string{RowLabelPrefix + s.ID}
	for _, ob := range s.Obligations {
		labels = append(labels, ob)
	}
	return labels
}

// Register adds the row's spec (one spec, labelled with Labels and
// bounded by cfg.RowTimeout) to t. Call it inside a container labelled
// ID.Label(), with a cfg that went through WithDefaults.
func (s RowSpec) Register(t *spec.Tree, cfg *Config) {
	t.It(s.Name, spec.Opts{Labels: s.Labels(), Timeout: cfg.RowTimeout}, func(ctx context.Context) {
		s.body(newRowRun(cfg, ctx, s))
	})
}

// specOf returns the spec ctx runs, or a handle that records into nothing
// outside a run.
func specOf(ctx context.Context) *spec.Spec {
	if sp := spec.From(ctx); sp != nil {
		return sp
	}
	return spec.NewSpec(&spec.Result{})
}

// Rows returns the chapter's rows in the order the chapter runs and reports
// them. Off Linux every row reports itself not exercised.
func Rows() []RowSpec {
	rows := []RowSpec{
		{ID: "exclusive-shared", Name: "refuses a hold while a guard is held, and a guard while a hold is held", Obligations: []string{ObExclusion}},
		{ID: "shared-shared", Name: "lets holds of several processes share a fence, and a hold creates none", Obligations: []string{ObExclusion, ObNoCreate}},
		{ID: "exclusive-exclusive", Name: "lets one guard at a time take a fence", Obligations: []string{ObExclusion}},
		{ID: "try", Name: "answers a try with in progress at once while the holder still holds", Obligations: []string{ObBound, ObExclusion}},
		{ID: "bound", Name: "gives up an acquire at its bound while the holder holds, and takes the fence once the holder lets go", Obligations: []string{ObBound, ObExclusion}},
		{ID: "sigkill", Name: "releases the fence at once when its holder is killed with SIGKILL", Obligations: []string{ObRelease, ObExclusion}},
		{ID: "cloexec", Name: "leaves no lock with a child started while a guard was held", Obligations: []string{ObRelease, ObExclusion}},
		{ID: "order-taken", Name: "takes a set in the global order: U, C by realm id, R from the root out", Obligations: []string{ObOrder, ObExclusion}},
		{ID: "order-refused", Name: "refuses a set that breaks the order before any lock is taken", Obligations: []string{ObOrder, ObRefusals, ObExclusion}},
		{ID: "realm-ids", Name: "refuses realm ids that are not one path component", Obligations: []string{ObRealmIDs}},
		{ID: "mode", Name: "creates the fence with mode exactly 0640 under umask 000 and 077", Obligations: []string{ObPermissions, ObFiles}},
		{ID: "group", Name: "gives the fence its directory's group, from a setgid directory or from its creator, and a creator that cannot leaves a fence every participant refuses", Obligations: []string{ObPermissions}},
		{ID: "file-kinds", Name: "refuses a symbolic link, a hard link, a FIFO and a directory with their causes", Obligations: []string{ObFiles}},
		{ID: "existing-mode", Name: "refuses an existing fence whose mode is not 0640, leaves it as it is, and takes it once its mode is corrected", Obligations: []string{ObPermissions}},
		{ID: "existing-group", Name: "refuses an existing fence of another group than its directory's, and takes one of another owner", Obligations: []string{ObPermissions}},
		{ID: "denied", Name: "refuses a participant the fence file denies", Obligations: []string{ObPermissions, ObExclusion}},
		{ID: "removed", Name: "follows a fence that a holder removes or replaces while guards and holds take it, never refusing it and never holding a removed one", Obligations: []string{ObFollow, ObExclusion}},
		{ID: "composed", Name: "skips a fence on a filesystem that hosts none for a standalone install, and refuses it for a composed one", Obligations: []string{ObFilesystems}},
		{ID: "filesystem", Name: "refuses a fence file on a filesystem that hosts none", Obligations: []string{ObFilesystems}},
		{ID: "flock-shared", Name: "excludes our guard and shares with our hold while flock -s holds the fence", Obligations: []string{ObFlock, ObBound}},
		{ID: "flock-exclusive", Name: "excludes our guard and our hold while flock -x holds the fence", Obligations: []string{ObFlock}},
		{ID: "flock-excluded", Name: "excludes flock(1) as our own holders are excluded", Obligations: []string{ObFlock}},
	}
	for i := range rows {
		rows[i].body = rowBody(rows[i].ID)
	}
	return rows
}

// Register adds the chapter's rows to t, under one container labelled
// ID.Label().
func Register(t *spec.Tree, cfg Config) {
	c := cfg.WithDefaults()
	t.Describe("Realm admission fences", spec.Opts{Labels: []string{ID.Label()}}, func() {
		for _, row := range Rows() {
			row.Register(t, &c)
		}
	})
}

// WithDefaults returns cfg with every empty field set to its default.
func (cfg Config) WithDefaults() Config {
	if cfg.TempDir == "" {
		cfg.TempDir = defaultTempDir()
	}
	if cfg.RowTimeout == 0 {
		cfg.RowTimeout = time.Minute
	}
	return cfg
}

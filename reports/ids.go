package reports

// ObligationID names an obligation of the catalogue, as its label selects
// it: "ob:1".."ob:9", "ob:fence", "ob:errors".
type ObligationID string

// RowID names a row of a chapter, as its label "row:ID" selects it.
type RowID string

// Label returns the row's label, "row:ID".
func (id RowID) Label() string { return "row:" + string(id) }

// ChapterID names a chapter, as its label "chapter:ID" selects it.
type ChapterID string

// Label returns the chapter's label, "chapter:ID".
func (id ChapterID) Label() string { return "chapter:" + string(id) }

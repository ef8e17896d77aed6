package store

import (
	"context"
	"fmt"

	"github.com/kairos-agent/kairos"
)

type researchDocRow struct {
	Seq     int64 `gorm:"column:seq;primaryKey;autoIncrement"`
	Path    string
	Title   string
	Text    string
	ModTime int64
	Size    int64
}

func (researchDocRow) TableName() string { return "research_docs" }

// DocStamps returns the stamp of every indexed document by path.
func (s *ResearchStore) DocStamps(ctx context.Context) (map[string]kairos.ResearchDocStamp, error) {
	var rows []researchDocRow
	if err := s.gdb(ctx).Select("path", "mod_time", "size").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read the offline index: %w", err)
	}
	out := make(map[string]kairos.ResearchDocStamp, len(rows))
	for _, r := range rows {
		out[r.Path] = kairos.ResearchDocStamp{ModTime: fromMS(r.ModTime), Size: r.Size}
	}
	return out, nil
}

// PutDoc indexes d, replacing the document at its path (one statement:
// the triggers keep the FTS5 table in step on SQLite).
func (s *ResearchStore) PutDoc(ctx context.Context, d *kairos.ResearchDoc) error {
	if d.Path == "" {
		return kairos.Errorf(kairos.EINVALID, "an indexed document needs a path")
	}
	q := `INSERT INTO research_docs (path, title, text, mod_time, size) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET title = excluded.title, text = excluded.text, mod_time = excluded.mod_time, size = excluded.size`
	if err := s.gdb(ctx).Exec(q, d.Path, d.Title, d.Text, ms(d.ModTime), d.Size).Error; err != nil {
		return fmt.Errorf("index %s: %w", d.Path, err)
	}
	return nil
}

// DeleteDocs removes documents by path.
func (s *ResearchStore) DeleteDocs(ctx context.Context, paths []string) error {
	for start := 0; start < len(paths); start += 500 {
		chunk := paths[start:min(start+500, len(paths))]
		if err := s.gdb(ctx).Where("path IN ?", chunk).Delete(&researchDocRow{}).Error; err != nil {
			return fmt.Errorf("drop from the offline index: %w", err)
		}
	}
	return nil
}

// SearchDocs returns the documents that best match any word of the query.
func (s *ResearchStore) SearchDocs(ctx context.Context, query string, limit int) ([]*kairos.ResearchDoc, error) {
	terms := QueryTerms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	limit = min(max(limit, 1), 50)
	var rows []researchDocRow
	var err error
	if s.db.dialect == DialectPostgres {
		err = s.gdb(ctx).Raw(`SELECT d.seq, d.path, d.title, d.text, d.mod_time, d.size FROM research_docs AS d, to_tsquery('english', ?) AS q(q)
			WHERE d.tsv @@ q.q ORDER BY ts_rank(d.tsv, q.q) DESC, d.path LIMIT ?`, PostgresTSQuery(terms), limit).Scan(&rows).Error
	} else {
		err = s.gdb(ctx).Raw(`SELECT d.seq, d.path, d.title, d.text, d.mod_time, d.size FROM research_docs_fts AS f
			JOIN research_docs AS d ON d.seq = f.rowid WHERE research_docs_fts MATCH ?
			ORDER BY bm25(research_docs_fts, 3.0, 1.0), d.path LIMIT ?`, SQLiteMatch(terms), limit).Scan(&rows).Error
	}
	if err != nil {
		return nil, fmt.Errorf("search the offline index: %w", err)
	}
	out := make([]*kairos.ResearchDoc, len(rows))
	for i, r := range rows {
		out[i] = &kairos.ResearchDoc{Path: r.Path, Title: r.Title, Text: r.Text, ModTime: fromMS(r.ModTime), Size: r.Size}
	}
	return out, nil
}

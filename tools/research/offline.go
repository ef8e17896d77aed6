package research

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// indexer keeps the offline folder's full-text index in step with the
// folder: new and changed files are read, removed ones dropped. It looks
// at the folder at most once a minute.
type indexer struct {
	e    *Engine
	mu   sync.Mutex
	dir  string
	last time.Time
}

const reindexEvery = time.Minute

// Kinds of documents the folder may hold, by extension.
var docKinds = map[string]string{".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
	".html": "html", ".htm": "html", ".pdf": "pdf"}

// refresh updates the index from dir. Files larger than maxBytes,
// unreadable ones, hidden ones and symbolic links are left out.
func (x *indexer) refresh(ctx context.Context, dir string, maxBytes int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := x.e.cfg.Now()
	if dir == x.dir && now.Sub(x.last) < reindexEvery {
		return nil
	}
	idx := x.e.cfg.Index
	stamps, err := idx.DocStamps(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err() // an unreadable entry is skipped
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		kind := docKinds[strings.ToLower(filepath.Ext(path))]
		if d.IsDir() || !d.Type().IsRegular() || kind == "" {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxBytes {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		mod := info.ModTime().UTC().Truncate(time.Millisecond)
		if st, ok := stamps[rel]; ok && st.ModTime.Equal(mod) && st.Size == info.Size() {
			return nil
		}
		title, text, ok := x.read(path, kind, maxBytes)
		if !ok {
			return nil
		}
		return idx.PutDoc(ctx, &kairos.ResearchDoc{Path: rel, Title: title, Text: text, ModTime: mod, Size: info.Size()})
	})
	if err != nil {
		return err
	}
	var gone []string
	for p := range stamps {
		if !seen[p] {
			gone = append(gone, p)
		}
	}
	if err := idx.DeleteDocs(ctx, gone); err != nil {
		return err
	}
	x.dir, x.last = dir, now
	return nil
}

// read extracts a document's title and text.
func (x *indexer) read(path, kind string, maxBytes int64) (title, text string, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", false
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	switch kind {
	case "html":
		title, text = htmlText(string(data))
	case "pdf":
		if x.e.cfg.PDFText == nil {
			return "", "", false
		}
		if text, err = x.e.cfg.PDFText(data, int(maxBytes)); err != nil {
			x.e.log.Info("offline document unreadable", "path", filepath.Base(path), "err", err)
			return "", "", false
		}
	case "markdown":
		text = markdownText(string(data))
		for _, l := range strings.SplitN(text, "\n", 20) {
			if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
				title = strings.TrimSpace(t)
				break
			}
		}
	default:
		text = string(data)
		if first, _, _ := strings.Cut(strings.TrimSpace(text), "\n"); len(first) <= 100 {
			title = strings.TrimSpace(first)
		}
	}
	if strings.TrimSpace(text) == "" {
		return "", "", false
	}
	if title == "" {
		title = name
	}
	return kairos.Clip(title, 300), text, true
}

var markdownMarks = strings.NewReplacer("**", "", "__", "", "`", "")

// markdownText drops the emphasis and code marks of Markdown, so that a
// quote of the words matches; the rest stays as written.
func markdownText(s string) string { return markdownMarks.Replace(s) }

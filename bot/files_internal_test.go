package bot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// A file server that claims a small file_size but streams more than
// 20 MB without a Content-Length: the download fails at the limit instead
// of reading on, and no error text carries the token.
func TestDownloadIsCappedAndTokenFree(t *testing.T) {
	const token = "42:SECRET-token-value"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/bot"+token+"/getFile":
			fmt.Fprint(w, `{"ok":true,"result":{"file_id":"x","file_unique_id":"u","file_size":1000,"file_path":"documents/file_1.bin"}}`)
		case r.URL.Path == "/file/bot"+token+"/documents/file_1.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := strings.Repeat("a", 1<<20)
			for i := 0; i < 21; i++ {
				io.WriteString(w, chunk)
				w.(http.Flusher).Flush()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	b, err := New(Config{Token: token, APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.download(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if kairos.ErrorCode(err) != kairos.EINVALID || n != kairos.MaxDownloadBytes {
		t.Fatalf("read %d bytes, err %v; want the limit and EINVALID", n, err)
	}

	// A server that is down: the error names no URL and no token.
	srv.Close()
	_, err = b.download(context.Background(), "x")
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v", err)
	}
}

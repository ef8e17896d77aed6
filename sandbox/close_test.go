package sandbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestCloseStopsAStuckCell: Close does not wait out a cell stuck in an
// infinite loop with a long time budget; after its bound (its context,
// or Config.CloseWait) the cell is stopped and Close returns.
func TestCloseStopsAStuckCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ctx  func() context.Context
	}{
		{"context ended", Config{PoolSize: -1, CloseWait: time.Hour, CacheDir: engineCache}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{"CloseWait", Config{PoolSize: -1, CloseWait: time.Millisecond, CacheDir: engineCache}, context.Background},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(context.Background(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			entered := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				entered <- struct{}{}
				w.Write([]byte(`{}`))
			}))
			defer srv.Close()
			tk := task(`await getJSON("` + srv.URL + `/"); let i = 0; while (true) { i++ }`)
			tk.Network = kairos.NetworkGrant{Enabled: true, AllowHosts: []string{"127.0.0.1"}, Methods: []string{"GET"}}
			tk.Budget.TimeBudget = time.Hour
			ran := make(chan *kairos.CellResult, 1)
			go func() {
				res, err := r.Run(context.Background(), tk)
				if err != nil {
					t.Error(err)
				}
				ran <- res
			}()
			<-entered // the cell runs; its loop follows the answer
			closed := make(chan error, 1)
			go func() { closed <- r.Close(tc.ctx()) }()
			select {
			case err := <-closed:
				if err != nil {
					t.Fatal(err)
				}
			case <-testkit.Deadline(t).Done():
				t.Fatal("Close still waits for a cell stuck in a loop")
			}
			res := <-ran
			if res == nil || res.Success || res.ErrorCategory != kairos.CatTimeout || !strings.Contains(res.Error, "sandbox is closing") {
				t.Fatalf("the stuck cell: %+v", res)
			}
		})
	}
}

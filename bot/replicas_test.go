package bot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// Two replicas share one PostgreSQL in webhook mode; updates of one chat
// arrive alternately at either. Every update is answered once, in
// update_id order.
func TestReplicasKeepPerChatOrder(t *testing.T) {
	base := os.Getenv(storetest.EnvURL)
	if base == "" {
		t.Skip(storetest.EnvURL + " not set: no PostgreSQL server")
	}
	url := storetest.FreshSchemaURL(t, base)
	tg := testkit.NewFakeTelegram(t, "")
	pol := kairos.DefaultPolicy()
	pol.Access.AllowedUsers = []int64{1}
	var mu sync.Mutex
	var order []string
	var srvs []*httptest.Server
	for r := 0; r < 2; r++ {
		db, err := store.Open(context.Background(), store.Config{DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ul := store.NewUpdateLog(db)
		b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), Policy: func() *kairos.Policy { return pol },
			Access: ul, Updates: ul, Settings: ul, SharedOrder: true, Limits: bot.Limits{PerChat: time.Millisecond, PerGroup: 6000, Global: 1000},
			Handler: handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
				time.Sleep(5 * time.Millisecond) // a turn takes time; replicas overlap
				mu.Lock()
				order = append(order, in.Text)
				mu.Unlock()
				return out.Final(ctx, "re: "+in.Text)
			}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.StartWebhook(context.Background(), "http://127.0.0.1/hook", "sec"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Shutdown(10 * time.Second) })
		srv := httptest.NewServer(b.WebhookHandler("sec"))
		t.Cleanup(srv.Close)
		srvs = append(srvs, srv)
	}
	const n = 12
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1800000000,"chat":{"id":1,"type":"private"},"from":{"id":1,"is_bot":false,"first_name":"A"},"text":"m%02d"}}`, i, i, i)
		req, _ := http.NewRequest(http.MethodPost, srvs[i%2].URL, strings.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "sec")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("update %d: status %d", i, resp.StatusCode)
		}
	}
	tg.MustWaitSentTo(1, n)
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("m%02d", i))
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("handled %v, want %v", order, want)
	}
	if got := len(tg.SentTo(1)); got != n {
		t.Fatalf("%d replies, want %d", got, n)
	}
}

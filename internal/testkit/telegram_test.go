package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

func newTestBot(t *testing.T, f *FakeTelegram, opts ...bot.Option) *bot.Bot {
	t.Helper()
	all := append([]bot.Option{
		bot.WithServerURL(f.URL()),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(3*time.Second, &http.Client{Timeout: 10 * time.Second}),
		bot.WithErrorsHandler(func(err error) {}),
	}, opts...)
	b, err := bot.New(f.Token(), all...)
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	return b
}

// rawCall posts a JSON body to the fake and decodes the Bot API answer.
func rawCall(t *testing.T, f *FakeTelegram, method string, body any) (status int, resp struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}) {
	t.Helper()
	b, _ := json.Marshal(body)
	r, err := http.Post(f.URL()+"/bot"+f.Token()+"/"+method, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer r.Body.Close()
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &resp); err != nil {
		t.Fatalf("%s: decode %q: %v", method, data, err)
	}
	return r.StatusCode, resp
}

func TestFakeTelegramGetMeAndToken(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b, err := bot.New(f.Token(), bot.WithServerURL(f.URL()))
	if err != nil {
		t.Fatalf("bot.New with getMe: %v", err)
	}
	me, err := b.GetMe(Deadline(t))
	if err != nil {
		t.Fatal(err)
	}
	if !me.IsBot || me.Username != f.BotUsername() || me.ID != 123456789 {
		t.Errorf("getMe = %+v", me)
	}

	_, err = bot.New("999:wrong", bot.WithServerURL(f.URL()))
	if !errors.Is(err, bot.ErrorUnauthorized) {
		t.Errorf("wrong token: err = %v, want ErrorUnauthorized", err)
	}
	r, err := http.Get(f.URL() + "/bot999:wrong/getMe")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"ok":false,"error_code":401,"description":"Unauthorized"}` {
		t.Errorf("wrong token answer = %d %s", r.StatusCode, body)
	}
}

func TestFakeTelegramSendMessageChecks(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)
	const chat = int64(1001)

	tests := []struct {
		name      string
		params    bot.SendMessageParams
		wantErr   string // substring of the error; "" for success
		wantPlain string
	}{
		{name: "plain", params: bot.SendMessageParams{Text: "hello"}, wantPlain: "hello"},
		{name: "html ok", params: bot.SendMessageParams{Text: "<b>bold</b> &amp; <a href=\"https://x.org\">link</a>", ParseMode: models.ParseModeHTML}, wantPlain: "bold & link"},
		{name: "html br", params: bot.SendMessageParams{Text: "a<br>b", ParseMode: models.ParseModeHTML}, wantErr: `can't parse entities: Unsupported start tag "br" at byte offset 1`},
		{name: "html unclosed", params: bot.SendMessageParams{Text: "<b>open", ParseMode: models.ParseModeHTML}, wantErr: `Can't find end tag corresponding to start tag "b"`},
		{name: "html misnested", params: bot.SendMessageParams{Text: "<b><i>x</b></i>", ParseMode: models.ParseModeHTML}, wantErr: "Unmatched end tag"},
		{name: "html span without class", params: bot.SendMessageParams{Text: "<span>x</span>", ParseMode: models.ParseModeHTML}, wantErr: `Tag "span" must have class "tg-spoiler"`},
		{name: "markdownv2 ok", params: bot.SendMessageParams{Text: "*bold* and 1\\.5", ParseMode: models.ParseModeMarkdown}, wantPlain: "bold and 1.5"},
		{name: "markdownv2 dot", params: bot.SendMessageParams{Text: "Done.", ParseMode: models.ParseModeMarkdown}, wantErr: `Character '.' is reserved and must be escaped with the preceding '\'`},
		{name: "markdownv2 open bold", params: bot.SendMessageParams{Text: "*bold", ParseMode: models.ParseModeMarkdown}, wantErr: "Can't find end of Bold entity at byte offset 0"},
		{name: "empty", params: bot.SendMessageParams{Text: ""}, wantErr: "message text is empty"},
		{name: "only markup", params: bot.SendMessageParams{Text: "<b> </b>", ParseMode: models.ParseModeHTML}, wantErr: "message text is empty"},
		{name: "4096 units", params: bot.SendMessageParams{Text: strings.Repeat("😀", 2048)}, wantPlain: strings.Repeat("😀", 2048)},
		{name: "4098 units", params: bot.SendMessageParams{Text: strings.Repeat("😀", 2049)}, wantErr: "message is too long"},
		{name: "long before parsing, short after", params: bot.SendMessageParams{Text: "<b>" + strings.Repeat("a", 4096) + "</b>", ParseMode: models.ParseModeHTML}, wantPlain: strings.Repeat("a", 4096)},
		{name: "bad parse mode", params: bot.SendMessageParams{Text: "x", ParseMode: "XML"}, wantErr: "unsupported parse_mode"},
		{name: "go-telegram inline keyboard", params: bot.SendMessageParams{Text: "ok?", ReplyMarkup: &models.InlineKeyboardMarkup{
			InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "Approve", CallbackData: "a"}}},
		}}, wantErr: "BUTTON_COPY_TEXT_INVALID"},
		{name: "raw inline keyboard", params: bot.SendMessageParams{Text: "ok?", ReplyMarkup: json.RawMessage(`{"inline_keyboard":[[{"text":"Approve","callback_data":"a"}]]}`)}, wantPlain: "ok?"},
		{name: "callback data too long", params: bot.SendMessageParams{Text: "ok?", ReplyMarkup: json.RawMessage(`{"inline_keyboard":[[{"text":"A","callback_data":"` + strings.Repeat("x", 65) + `"}]]}`)}, wantErr: "BUTTON_DATA_INVALID"},
		{name: "reply to missing", params: bot.SendMessageParams{Text: "re", ReplyParameters: &models.ReplyParameters{MessageID: 999}}, wantErr: "message to be replied not found"},
		{name: "reply to missing allowed", params: bot.SendMessageParams{Text: "re", ReplyParameters: &models.ReplyParameters{MessageID: 999, AllowSendingWithoutReply: true}}, wantPlain: "re"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.params
			p.ChatID = chat
			before := len(f.Sent())
			msg, err := b.SendMessage(ctx, &p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if !errors.Is(err, bot.ErrorBadRequest) {
					t.Errorf("err = %v, want ErrorBadRequest", err)
				}
				if got := len(f.Sent()); got != before {
					t.Errorf("a rejected message was recorded")
				}
				return
			}
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			if msg.Text != tc.wantPlain || msg.Chat.ID != chat || msg.ID == 0 {
				t.Errorf("message = %+v, want text %q", msg, tc.wantPlain)
			}
			sent := f.SentTo(chat)
			last := sent[len(sent)-1]
			if last.PlainText != tc.wantPlain || last.Text != p.Text || last.ParseMode != string(p.ParseMode) || last.MessageID != msg.ID {
				t.Errorf("recorded %+v", last)
			}
		})
	}
}

func TestFakeTelegramEditAndButtons(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)
	const chat, user = int64(42), int64(42)

	markup := json.RawMessage(`{"inline_keyboard":[[{"text":"Approve","callback_data":"ap:1"},{"text":"Deny","callback_data":"de:1"}]]}`)
	msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "Run it?", ReplyMarkup: markup})
	if err != nil {
		t.Fatal(err)
	}
	if msg.ReplyMarkup == nil || len(msg.ReplyMarkup.InlineKeyboard[0]) != 2 {
		t.Errorf("reply markup not echoed: %+v", msg.ReplyMarkup)
	}
	if got := f.SentTo(chat)[0].Buttons(); strings.Join(got, ",") != "Approve,Deny" {
		t.Errorf("Buttons = %v", got)
	}

	upd, err := f.PressButton(chat, user, "Deny")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: CallbackQueryID(upd), Text: "Denied"})
	if err != nil || !ok {
		t.Fatalf("answerCallbackQuery: %v", err)
	}
	if _, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: CallbackQueryID(upd)}); err == nil {
		t.Errorf("second answer accepted")
	}
	if a := f.CallbackAnswers(); len(a) != 1 || a[0].Text != "Denied" {
		t.Errorf("answers = %+v", a)
	}

	// Editing the text without reply_markup removes the keyboard, as Telegram does.
	edited, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: msg.ID, Text: "<i>Denied</i>", ParseMode: models.ParseModeHTML})
	if err != nil {
		t.Fatal(err)
	}
	if edited.Text != "Denied" || edited.EditDate == 0 || edited.ReplyMarkup != nil {
		t.Errorf("edited = %+v", edited)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: msg.ID, Text: "<i>Denied</i>", ParseMode: models.ParseModeHTML})
	if err == nil || !strings.Contains(err.Error(), "message is not modified") {
		t.Errorf("identical edit: err = %v", err)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: msg.ID, Text: "Denied."})
	if err != nil {
		t.Errorf("edit to new text: %v", err)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: 777, Text: "x"})
	if err == nil || !strings.Contains(err.Error(), "message to edit not found") {
		t.Errorf("edit of missing message: err = %v", err)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: msg.ID, Text: "bad.", ParseMode: models.ParseModeMarkdown})
	if err == nil || !strings.Contains(err.Error(), "can't parse entities") {
		t.Errorf("edit with bad markdown: err = %v", err)
	}

	edits := f.Edits(chat)
	if len(edits) != 2 || edits[0].PlainText != "Denied" || edits[1].PlainText != "Denied." {
		t.Errorf("edits = %+v", edits)
	}
	s := f.SentTo(chat)[0]
	if s.LastText() != "Denied." || len(s.Edits) != 2 || s.LastReplyMarkup() != nil {
		t.Errorf("sent record = %+v", s)
	}

	// A user's own message cannot be edited by the bot.
	u := f.PushText(chat, user, "mine", time.Time{})
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: f.MessageIDOf(u), Text: "x"})
	if err == nil || !strings.Contains(err.Error(), "message can't be edited") {
		t.Errorf("edit of user message: err = %v", err)
	}
}

func TestFakeTelegramActionsCommandsAndErrors(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)

	if ok, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: 5, Action: models.ChatActionTyping}); err != nil || !ok {
		t.Fatalf("sendChatAction: %v", err)
	}
	if _, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: 5, Action: "dancing"}); err == nil {
		t.Errorf("unknown action accepted")
	}
	if a := f.ChatActions(5); len(a) != 1 || a[0].Action != "typing" {
		t.Errorf("actions = %+v", a)
	}

	cmds := []models.BotCommand{{Command: "start", Description: "Start"}, {Command: "newsession", Description: "New session"}}
	if ok, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil || !ok {
		t.Fatalf("setMyCommands: %v", err)
	}
	if got := f.Commands(); len(got) != 2 || got[1].Command != "newsession" {
		t.Errorf("Commands = %+v", got)
	}
	_, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "New-Session", Description: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "BOT_COMMAND_INVALID") {
		t.Errorf("invalid command: err = %v", err)
	}

	t.Run("429", func(t *testing.T) {
		f.InjectTooManyRequests("sendMessage", 2, 7)
		for i := 0; i < 2; i++ {
			_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 5, Text: "hi"})
			var tm *bot.TooManyRequestsError
			if !errors.As(err, &tm) || tm.RetryAfter != 7 {
				t.Fatalf("call %d: err = %#v, want TooManyRequestsError retry 7", i, err)
			}
			if !strings.Contains(tm.Message, "Too Many Requests: retry after 7") {
				t.Errorf("message = %q", tm.Message)
			}
		}
		if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 5, Text: "hi"}); err != nil {
			t.Errorf("third call: %v", err)
		}
		status, resp := rawCall(t, f, "getMe", nil)
		if status != 200 || !resp.OK {
			t.Errorf("other method affected: %d %+v", status, resp)
		}
		f.InjectTooManyRequests("*", 1, 3)
		status, resp = rawCall(t, f, "getMe", nil)
		if status != 429 || resp.ErrorCode != 429 || resp.Parameters.RetryAfter != 3 || resp.Description != "Too Many Requests: retry after 3" {
			t.Errorf("raw 429 = %d %+v", status, resp)
		}
	})
	t.Run("5xx", func(t *testing.T) {
		f.InjectError("sendMessage", 1, 502, "Bad Gateway")
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 5, Text: "hi"})
		if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
			t.Errorf("err = %v", err)
		}
		calls := f.Calls("sendMessage")
		if last := calls[len(calls)-1]; last.Status != 502 {
			t.Errorf("recorded status %d", last.Status)
		}
	})
	t.Run("network", func(t *testing.T) {
		f.InjectNetworkError("sendMessage", 1)
		if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 5, Text: "hi"}); err == nil {
			t.Errorf("dropped connection gave no error")
		}
		if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 5, Text: "hi"}); err != nil {
			t.Errorf("after drop: %v", err)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		f.BlockChat(6)
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 6, Text: "hi"})
		if !errors.Is(err, bot.ErrorForbidden) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestFakeTelegramBodyEncodings(t *testing.T) {
	f := NewFakeTelegram(t, "")
	base := f.URL() + "/bot" + f.Token() + "/sendMessage"

	status, resp := rawCall(t, f, "sendMessage", map[string]any{"chat_id": 9, "text": "json <b>x</b>", "parse_mode": "html",
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]string{{{"text": "Go", "url": "https://example.com"}}}}})
	if status != 200 || !resp.OK {
		t.Fatalf("json: %d %+v", status, resp)
	}
	r, err := http.PostForm(base, url.Values{"chat_id": {"9"}, "text": {"form"}, "message_thread_id": {"0"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	r, err = http.Get(base + "?chat_id=9&text=query")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	sent := f.SentTo(9)
	if len(sent) != 3 || sent[0].PlainText != "json x" || sent[1].PlainText != "form" || sent[2].PlainText != "query" {
		t.Fatalf("sent = %+v", sent)
	}
	if string(sent[0].ReplyMarkup) != `{"inline_keyboard":[[{"text":"Go","url":"https://example.com"}]]}` {
		t.Errorf("markup = %s", sent[0].ReplyMarkup)
	}
	calls := f.Calls("sendmessage")
	if calls[0].Encoding != "json" || calls[1].Encoding != "urlencoded" || calls[2].Encoding != "query" {
		t.Errorf("encodings = %q %q %q", calls[0].Encoding, calls[1].Encoding, calls[2].Encoding)
	}
	if status, resp := rawCall(t, f, "sendSticker", map[string]any{"chat_id": 9}); status != 404 || resp.Description != "Not Found" {
		t.Errorf("unknown method = %d %+v", status, resp)
	}
	f.Handle("setMessageReaction", func(p map[string]string) (any, *APIError) { return true, nil })
	if status, _ := rawCall(t, f, "setMessageReaction", map[string]any{"chat_id": 9}); status != 200 {
		t.Errorf("custom handler status %d", status)
	}
}

func TestFakeTelegramPollingWithBotStart(t *testing.T) {
	f := NewFakeTelegram(t, "")
	got := make(chan *models.Update, 10)
	b := newTestBot(t, f, bot.WithNotAsyncHandlers(), bot.WithDefaultHandler(func(ctx context.Context, b *bot.Bot, u *models.Update) { got <- u }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	date := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) // ahead of the host clock on purpose
	id1 := f.PushText(777, 777, "/start hello", date, From("Ann", "ann"))
	id2 := f.PushText(-1001234567890, 777, "in topic @kairos_test_bot", date, AsGroup("Team"), InTopic(12))

	recv := func() *models.Update {
		t.Helper()
		select {
		case u := <-got:
			return u
		case <-Deadline(t).Done():
			t.Fatal("no update delivered")
			return nil
		}
	}
	u1, u2 := recv(), recv()
	if u1.ID != id1 || u2.ID != id2 {
		t.Fatalf("ids = %d,%d want %d,%d", u1.ID, u2.ID, id1, id2)
	}
	m := u1.Message
	if m.Text != "/start hello" || m.Date != int(date.Unix()) || m.From.FirstName != "Ann" || m.Chat.Type != "private" {
		t.Errorf("message = %+v", m)
	}
	if len(m.Entities) != 1 || m.Entities[0].Type != models.MessageEntityTypeBotCommand || m.Entities[0].Length != 6 {
		t.Errorf("entities = %+v", m.Entities)
	}
	g := u2.Message
	if g.Chat.Type != "supergroup" || !g.Chat.IsForum || g.MessageThreadID != 12 || !g.IsTopicMessage || g.Chat.Title != "Team" {
		t.Errorf("group message = %+v chat %+v", g, g.Chat)
	}
	if len(g.Entities) != 1 || g.Entities[0].Type != models.MessageEntityTypeMention {
		t.Errorf("group entities = %+v", g.Entities)
	}

	// Reply into the topic; an unknown topic is refused.
	if _, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: g.Chat.ID, MessageThreadID: 12, Text: "ok"}); err != nil {
		t.Errorf("send to topic: %v", err)
	}
	if _, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: g.Chat.ID, MessageThreadID: 13, Text: "ok"}); err == nil || !strings.Contains(err.Error(), "message thread not found") {
		t.Errorf("send to unknown topic: %v", err)
	}
	if s := f.SentTo(g.Chat.ID); len(s) != 1 || s[0].ThreadID != 12 {
		t.Errorf("sent to group = %+v", s)
	}

	// A callback press arrives too.
	f.PushCallback(777, 777, 1, "yes")
	if u := recv(); u.CallbackQuery == nil || u.CallbackQuery.Data != "yes" || u.CallbackQuery.Message.Message == nil {
		t.Errorf("callback update = %+v", u)
	}
	// The bot confirms what it got with its next offset.
	if err := f.WaitConsumed(Deadline(t)); err != nil {
		t.Fatal(err)
	}
}

func TestFakeTelegramGetUpdatesSemantics(t *testing.T) {
	f := NewFakeTelegram(t, "")
	get := func(t *testing.T, params map[string]any) (int, updatesResp, string) {
		t.Helper()
		return getUpdatesRaw(t, f, params)
	}
	var ids []int64
	for i := 0; i < 5; i++ {
		ids = append(ids, f.PushText(1, 1, "m"+strconv.Itoa(i), time.Time{}))
	}

	t.Run("limit", func(t *testing.T) {
		_, ups, _ := get(t, map[string]any{"limit": 2})
		if len(ups) != 2 || ups[0].UpdateID != ids[0] {
			t.Errorf("ups = %+v", ups)
		}
	})
	t.Run("offset confirms", func(t *testing.T) {
		_, ups, _ := get(t, map[string]any{"offset": ids[2]})
		if len(ups) != 3 || ups[0].UpdateID != ids[2] {
			t.Errorf("ups = %+v", ups)
		}
		_, ups, _ = get(t, map[string]any{})
		if len(ups) != 3 {
			t.Errorf("confirmed updates came back: %+v", ups)
		}
	})
	t.Run("negative offset", func(t *testing.T) {
		_, ups, _ := get(t, map[string]any{"offset": -1})
		if len(ups) != 1 || ups[0].UpdateID != ids[4] {
			t.Errorf("ups = %+v", ups)
		}
	})
	t.Run("long poll wakes on push", func(t *testing.T) {
		get(t, map[string]any{"offset": ids[4] + 1})
		ch := startLongPoll(t, f, ids[4]+1) // push only once the poll is waiting
		id := f.PushText(1, 1, "late", time.Time{})
		select {
		case body := <-ch:
			var resp struct {
				Result updatesResp `json:"result"`
			}
			_ = json.Unmarshal(body, &resp)
			if len(resp.Result) != 1 || resp.Result[0].UpdateID != id {
				t.Errorf("answer = %s", body)
			}
		case <-Deadline(t).Done():
			t.Fatal("long poll did not return after a push")
		}
	})
	t.Run("odd update", func(t *testing.T) {
		id := f.PushUpdateJSON(`{"message":{"message_id":1,"date":0,"chat":{"id":1,"type":"private"}}}`)
		_, ups, _ := get(t, map[string]any{"offset": -1})
		if len(ups) != 1 || ups[0].UpdateID != id {
			t.Errorf("ups = %+v", ups)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		ch := startLongPoll(t, f, 1<<40)
		if status, _, desc := get(t, map[string]any{"offset": 1 << 40}); status != 200 {
			t.Errorf("second poll = %d %q", status, desc)
		}
		select {
		case body := <-ch:
			if !strings.Contains(string(body), `"error_code":409`) || !strings.Contains(string(body), "terminated by other getUpdates request") {
				t.Errorf("superseded poll = %s", body)
			}
		case <-Deadline(t).Done():
			t.Fatal("superseded poll did not return")
		}
	})
}

type updatesResp []struct {
	UpdateID int64 `json:"update_id"`
}

// getUpdatesRaw calls getUpdates with params and returns the status, the
// updates' ids and the error description.
func getUpdatesRaw(t *testing.T, f *FakeTelegram, params map[string]any) (int, updatesResp, string) {
	t.Helper()
	status, resp := rawCall(t, f, "getUpdates", params)
	var ups updatesResp
	if resp.OK {
		if err := json.Unmarshal(resp.Result, &ups); err != nil {
			t.Fatal(err)
		}
	}
	return status, ups, resp.Description
}

// startLongPoll starts a 30 s getUpdates from offset and returns once the
// fake holds it; the channel gets the raw answer.
func startLongPoll(t *testing.T, f *FakeTelegram, offset int64) <-chan []byte {
	t.Helper()
	f.mu.Lock()
	g0 := f.pollGen
	f.mu.Unlock()
	ch := make(chan []byte, 1)
	go func() { ch <- postRaw(f, "getUpdates", map[string]any{"offset": offset, "timeout": 30}) }()
	if err := f.waitFor(Deadline(t), "poll", func() bool { return f.pollGen > g0 }); err != nil {
		t.Fatal(err)
	}
	return ch
}

// postRaw posts a JSON body and returns the answer's body ("" on failure);
// safe to call from any goroutine.
func postRaw(f *FakeTelegram, method string, body any) []byte {
	b, _ := json.Marshal(body)
	r, err := http.Post(f.URL()+"/bot"+f.Token()+"/"+method, "application/json", strings.NewReader(string(b)))
	if err != nil {
		return []byte(err.Error())
	}
	defer r.Body.Close()
	data, _ := io.ReadAll(r.Body)
	return data
}

func newHTTPServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFakeTelegramWebhook(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)

	type delivery struct {
		secret string
		body   []byte
	}
	got := make(chan delivery, 10)
	fail := make(chan bool, 10)
	fail <- true // the first delivery fails and is retried
	hook := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case <-fail:
			w.WriteHeader(500)
			return
		default:
		}
		got <- delivery{r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), body}
	}))

	_, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: "http://example.com/hook"})
	if err == nil || !strings.Contains(err.Error(), "HTTPS URL must be provided") {
		t.Errorf("http webhook: %v", err)
	}
	if _, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: hook + "/hook", SecretToken: "bad token!"}); err == nil {
		t.Errorf("bad secret accepted")
	}
	if ok, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: hook + "/hook", SecretToken: "s3cret_-x"}); err != nil || !ok {
		t.Fatalf("setWebhook: %v", err)
	}
	if w := f.Webhook(); w.SecretToken != "s3cret_-x" || w.URL != hook+"/hook" {
		t.Errorf("webhook = %+v", w)
	}
	status, resp := rawCall(t, f, "getUpdates", nil)
	if status != 409 || !strings.Contains(resp.Description, "webhook is active") {
		t.Errorf("getUpdates with webhook = %d %+v", status, resp)
	}

	id := f.PushText(3, 3, "via hook", time.Time{})
	select {
	case d := <-got:
		var u models.Update
		if err := json.Unmarshal(d.body, &u); err != nil || u.ID != id || u.Message.Text != "via hook" {
			t.Errorf("delivered %s (%v)", d.body, err)
		}
		if d.secret != "s3cret_-x" {
			t.Errorf("secret header = %q", d.secret)
		}
	case <-Deadline(t).Done():
		t.Fatal("update not delivered")
	}
	if err := f.WaitConsumed(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := b.GetWebhookInfo(ctx)
	if err != nil || info.URL != hook+"/hook" || info.PendingUpdateCount != 0 || info.LastErrorMessage == "" {
		t.Errorf("webhook info = %+v, %v", info, err)
	}
	if ok, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil || !ok {
		t.Fatalf("deleteWebhook: %v", err)
	}
	if status, _ := rawCall(t, f, "getUpdates", nil); status != 200 {
		t.Errorf("getUpdates after deleteWebhook = %d", status)
	}
}

func TestFakeTelegramChatRateLimit(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)
	now := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	f.SetNow(func() time.Time { return now })
	f.SetChatRateLimit(time.Second, 1)

	send := func(chat int64) error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "x"})
		return err
	}
	if err := send(1); err != nil {
		t.Fatal(err)
	}
	var tm *bot.TooManyRequestsError
	if err := send(1); !errors.As(err, &tm) || tm.RetryAfter != 1 {
		t.Errorf("second send in the same second: %v", err)
	}
	if err := send(2); err != nil {
		t.Errorf("another chat is not limited: %v", err)
	}
	now = now.Add(time.Second)
	if err := send(1); err != nil {
		t.Errorf("after the interval: %v", err)
	}
	sent := f.SentTo(1)
	if len(sent) != 2 || sent[1].Time.Sub(sent[0].Time) != time.Second {
		t.Errorf("sent = %+v", sent)
	}
}

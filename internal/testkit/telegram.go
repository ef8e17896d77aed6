package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultBotToken is the token NewFakeTelegram uses when given "".
const DefaultBotToken = "123456789:TEST-fake-bot-token"

// User is a Telegram user as it appears in updates and in getMe.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// BotCommand is one entry of the bot's command menu.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// APIError is a Bot API failure answer. Code is both the HTTP status and
// the error_code field.
type APIError struct {
	Code        int
	Description string
	RetryAfter  int   // seconds, for 429
	MigrateTo   int64 // migrate_to_chat_id, for 400
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Description) }

func badRequest(format string, args ...any) *APIError {
	return &APIError{Code: 400, Description: "Bad Request: " + fmt.Sprintf(format, args...)}
}

// MethodHandler answers a Bot API method the fake does not implement
// itself. params holds the request's parameters as strings (JSON values
// that are not strings keep their JSON text).
type MethodHandler func(params map[string]string) (result any, err *APIError)

// Call is one request the fake received.
type Call struct {
	Method      string            // as written in the URL
	Params      map[string]string // parameters as strings; objects keep their JSON text
	Encoding    string            // "json", "multipart", "urlencoded" or "query"
	Time        time.Time
	Status      int    // HTTP status of the answer (0 when the connection was dropped)
	Description string // error description when the answer was not ok
}

// SentMessage is a message the bot sent, with every later edit.
type SentMessage struct {
	MessageID   int
	ChatID      int64
	ThreadID    int    // message_thread_id, 0 when none
	ReplyTo     int    // message id replied to, 0 when none
	Text        string // text as the bot sent it (before entity parsing)
	ParseMode   string
	PlainText   string // text as the user sees it (after entity parsing)
	Entities    []Entity
	ReplyMarkup json.RawMessage // compact JSON, nil when none
	Time        time.Time       // when the fake accepted it (its clock)
	Edits       []Edit
	Deleted     bool
}

// LastText returns the visible text after the last edit.
func (m SentMessage) LastText() string {
	for i := len(m.Edits) - 1; i >= 0; i-- {
		if m.Edits[i].Method == "editMessageText" {
			return m.Edits[i].PlainText
		}
	}
	return m.PlainText
}

// LastReplyMarkup returns the reply markup after the last edit.
func (m SentMessage) LastReplyMarkup() json.RawMessage {
	if len(m.Edits) > 0 {
		return m.Edits[len(m.Edits)-1].ReplyMarkup
	}
	return m.ReplyMarkup
}

// Buttons returns the texts of the inline keyboard buttons of the message
// after its last edit, row by row.
func (m SentMessage) Buttons() []string {
	var out []string
	for _, b := range inlineButtons(m.LastReplyMarkup()) {
		out = append(out, b.Text)
	}
	return out
}

// Edit is one successful editMessageText or editMessageReplyMarkup.
type Edit struct {
	Method      string // "editMessageText" or "editMessageReplyMarkup"
	ChatID      int64
	MessageID   int
	Text        string // as sent (editMessageText only)
	ParseMode   string
	PlainText   string // visible text after the edit
	Entities    []Entity
	ReplyMarkup json.RawMessage
	Time        time.Time
}

// ChatAction is one successful sendChatAction.
type ChatAction struct {
	ChatID   int64
	ThreadID int
	Action   string
	Time     time.Time
}

// CallbackAnswer is one successful answerCallbackQuery.
type CallbackAnswer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
	URL             string
	Time            time.Time
}

// WebhookState is what setWebhook recorded.
type WebhookState struct {
	URL                string
	SecretToken        string
	AllowedUpdates     []string
	MaxConnections     int
	IPAddress          string
	DropPendingUpdates bool
	LastErrorDate      time.Time
	LastErrorMessage   string
	Delivered          int // updates the webhook accepted
}

type queuedUpdate struct {
	id   int64
	kind string // message, edited_message, callback_query, ... ("" when unknown)
	raw  json.RawMessage
}

type storedMessage struct {
	id        int
	fromBot   bool
	from      *User
	threadID  int
	date      int64
	text      string
	entities  []Entity
	markup    json.RawMessage
	sent      *SentMessage // nil for pushed messages
	deleted   bool
	replyToID int
}

type chatState struct {
	id        int64
	typ       string
	title     string
	username  string
	firstName string
	isForum   bool
	known     bool // seen in a pushed update
	threads   map[int]bool
	nextID    int
	messages  map[int]*storedMessage
}

type injection struct {
	method    string // lower case, "*" for any
	remaining int
	err       *APIError
	drop      bool
}

type callbackState struct {
	answered bool
}

// FakeTelegram is an in-process Telegram Bot API server for tests. It serves
// {URL}/bot<token>/<method> with JSON, multipart and urlencoded bodies, keeps
// an update queue with real getUpdates semantics (long polling, offset
// confirmation, limit, 409 conflicts), validates outgoing text and markup as
// Telegram does, and records every call. It is safe for concurrent use.
type FakeTelegram struct {
	tb    testing.TB
	srv   *httptest.Server
	token string

	mu         sync.Mutex
	changed    chan struct{}
	closing    chan struct{}
	closed     bool
	now        func() time.Time
	bot        User
	nextUpdate int64
	queue      []queuedUpdate
	pushedMsg  map[int64][2]int64 // update id → chat id, message id
	chats      map[int64]*chatState
	sent       []*SentMessage
	edits      []Edit
	actions    []ChatAction
	answers    []CallbackAnswer
	calls      []Call
	injections []*injection
	commands   map[string][]BotCommand
	webhook    WebhookState
	hookStop   chan struct{}
	hookDone   chan struct{}
	hookClient *http.Client
	callbacks  map[string]*callbackState
	blocked    map[int64]bool
	handlers   map[string]MethodHandler
	pollGen    int64
	rateLimit  time.Duration
	rateRetry  int
	lastSend   map[int64]time.Time
	files      *fileStore // getFile and downloads (telegram_files.go)
}

// NewFakeTelegram starts a fake Bot API server for token (DefaultBotToken
// when empty) and stops it when the test ends.
func NewFakeTelegram(tb testing.TB, token string) *FakeTelegram {
	tb.Helper()
	if token == "" {
		token = DefaultBotToken
	}
	botID, err := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	if err != nil || botID <= 0 {
		botID = 4242
	}
	f := &FakeTelegram{
		tb:         tb,
		token:      token,
		changed:    make(chan struct{}),
		closing:    make(chan struct{}),
		now:        time.Now,
		bot:        User{ID: botID, IsBot: true, FirstName: "Kairos Test", Username: "kairos_test_bot"},
		nextUpdate: 100000,
		pushedMsg:  map[int64][2]int64{},
		chats:      map[int64]*chatState{},
		commands:   map[string][]BotCommand{},
		callbacks:  map[string]*callbackState{},
		blocked:    map[int64]bool{},
		handlers:   map[string]MethodHandler{},
		hookClient: &http.Client{Timeout: 10 * time.Second},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	tb.Cleanup(f.Close)
	return f
}

// Close stops the server; pending long polls return at once. It is called
// automatically when the test ends.
func (f *FakeTelegram) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.closing)
	f.mu.Unlock()
	f.stopWebhook()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// URL is the server's base URL, the value for bot.WithServerURL or
// TELEGRAM_API_URL.
func (f *FakeTelegram) URL() string { return f.srv.URL }

// Token is the bot token the fake accepts.
func (f *FakeTelegram) Token() string { return f.token }

// Bot returns the bot's own user (what getMe answers).
func (f *FakeTelegram) Bot() User {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bot
}

// BotUsername is the bot's @username without the '@'.
func (f *FakeTelegram) BotUsername() string { return f.Bot().Username }

// SetBotUser changes the name and username getMe reports.
func (f *FakeTelegram) SetBotUser(firstName, username string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bot.FirstName = firstName
	f.bot.Username = username
}

// SetNow replaces the clock used for the dates of sent messages and the
// timestamps of records (time.Now by default).
func (f *FakeTelegram) SetNow(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// SetWebhookHTTPClient sets the client used to deliver updates to a
// webhook (for example an httptest TLS server's Client()).
func (f *FakeTelegram) SetWebhookHTTPClient(c *http.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hookClient = c
}

// BlockChat makes every later send to chatID fail with 403 as when the
// user blocked the bot (or the bot was removed from the group).
func (f *FakeTelegram) BlockChat(chatID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked[chatID] = true
}

// SetChatRateLimit makes the fake enforce a minimum interval between
// messages sent to the same chat, as Telegram roughly does (about one per
// second per chat): a sendMessage that comes sooner is answered with 429
// and retry_after retryAfter. Zero turns the limit off (the default).
func (f *FakeTelegram) SetChatRateLimit(minInterval time.Duration, retryAfter int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rateLimit, f.rateRetry = minInterval, retryAfter
	f.lastSend = map[int64]time.Time{}
}

// Handle installs a handler for a method the fake does not implement (or
// overrides one it does). Method names are case-insensitive.
func (f *FakeTelegram) Handle(method string, h MethodHandler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[strings.ToLower(method)] = h
}

// InjectTooManyRequests answers the next n calls of method ("*" for any)
// with 429 "Too Many Requests: retry after X".
func (f *FakeTelegram) InjectTooManyRequests(method string, n int, retryAfter int) {
	f.inject(method, n, &APIError{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}, false)
}

// InjectError answers the next n calls of method ("*" for any) with the
// given error code and description (e.g. 500 "Internal Server Error",
// 502 "Bad Gateway").
func (f *FakeTelegram) InjectError(method string, n int, code int, description string) {
	if description == "" {
		description = http.StatusText(code)
	}
	f.inject(method, n, &APIError{Code: code, Description: description}, false)
}

// InjectNetworkError drops the connection without an answer on the next n
// calls of method ("*" for any).
func (f *FakeTelegram) InjectNetworkError(method string, n int) {
	f.inject(method, n, nil, true)
}

func (f *FakeTelegram) inject(method string, n int, err *APIError, drop bool) {
	if n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections = append(f.injections, &injection{method: strings.ToLower(method), remaining: n, err: err, drop: drop})
}

package main

// Driving a peer agent through the same fakes (issue 36): PicoClaw
// (github.com/sipeed/picoclaw), built from its source. The load, the
// reply detection and the figures are the same as for kairos; only the
// set-up differs: PicoClaw reads ~/.picoclaw/config.json (PICOCLAW_HOME
// here), talks to the Bot API through telego (settings.base_url is the
// API server) and to the model through its OpenAI-compatible HTTP
// provider (model_list[].api_base + "/chat/completions", not streamed
// unless the model entry asks for it).

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// peerPlaceholder is the text PicoClaw sends when a message arrives and
// later edits into the reply (its default); it is no reply, and one left
// unedited is a stale placeholder.
const peerPlaceholder = "Thinking... 💭"

// peerToken is the bot token a peer is given: telego refuses a token that
// does not match ^\d+:[\w-]{35}$, which fakeToken does not.
const peerToken = "777000:LOAD-fake-bot-token-0123456789abcde"

// peerOptions are the flags of peer.go and closed.go.
type peerOptions struct {
	peer          string // "" (kairos) or "picoclaw"
	peerBin       string
	peerStream    bool
	closed        bool
	think         time.Duration
	requestSample string
}

// peerFlags registers the flags that select a peer instead of kairos.
func peerFlags(o *options) {
	flag.StringVar(&o.peer, "peer", "", `drive a peer instead of kairos: "picoclaw" (needs -peer-bin)`)
	flag.StringVar(&o.peerBin, "peer-bin", "", "the peer's binary (PicoClaw: CGO_ENABLED=0 go build -tags goolm,stdjson ./cmd/picoclaw)")
	flag.BoolVar(&o.closed, "closed", false, "closed loop: each chat sends its next message when the reply to its previous one is seen (closed.go); the default pushes everything at once")
	flag.DurationVar(&o.think, "think", 0, "with -closed: wait this long after a reply before the chat's next message")
	flag.StringVar(&o.requestSample, "request-sample", "", "write the last model request body (JSON) to this file, to see what a plain turn sends")
	flag.BoolVar(&o.peerStream, "peer-streaming", false, "PicoClaw: turn on Telegram streaming (sendMessageDraft) and model streaming; off is what `picoclaw onboard` writes")
}

// botToken is the token the fake Bot API serves under.
func (o options) botToken() string {
	if o.peer != "" {
		return peerToken
	}
	return fakeToken
}

// agentName names what is measured, for the report.
func (o options) agentName() string {
	if o.peer != "" {
		return o.peer
	}
	return "kairos"
}

// checkPeer validates the peer flags.
func (o options) checkPeer() error {
	switch o.peer {
	case "":
		return nil
	case "picoclaw":
		if o.peerBin == "" {
			return errors.New("-peer picoclaw needs -peer-bin (build it with CGO_ENABLED=0 go build -tags goolm,stdjson ./cmd/picoclaw)")
		}
		if o.databaseURL != "" || o.cpuProfile != "" || o.heapProfile != "" {
			return errors.New("-database-url, -cpuprofile and -heapprofile are kairos's; PicoClaw has none of them")
		}
		return nil
	default:
		return fmt.Errorf("-peer %q: only picoclaw is known", o.peer)
	}
}

// picoclawConfig is PicoClaw's config.json (version 3) for the load: the
// fake Bot API and the fake model, the load's chats allowed, the gateway
// on a free loopback port (so parallel runs do not collide on 18790),
// and everything else at PicoClaw's defaults (typing on, the "Thinking…"
// placeholder edited into the reply, streaming off, one turn at a time
// unless -workers says otherwise).
func picoclawConfig(home, tgURL, modelURL string, chats, workers int, stream bool, gatewayPort int) map[string]any {
	allow := make([]string, chats)
	for c := range chats {
		allow[c] = strconv.Itoa(10001 + c)
	}
	defaults := map[string]any{
		"workspace":  filepath.Join(home, "workspace"),
		"model_name": "load-model",
	}
	if workers > 0 {
		defaults["max_parallel_turns"] = workers
	}
	model := map[string]any{
		"model_name": "load-model",
		"model":      "openai/load-model",
		"api_base":   modelURL + "/v1",
		"api_keys":   []string{"sk-load-test"},
	}
	settings := map[string]any{"token": peerToken, "base_url": tgURL}
	if stream {
		model["streaming"] = map[string]any{"enabled": true}
		settings["streaming"] = map[string]any{"enabled": true}
	}
	return map[string]any{
		"version":    3,
		"agents":     map[string]any{"defaults": defaults},
		"model_list": []any{model},
		"channel_list": map[string]any{"telegram": map[string]any{
			"enabled":     true,
			"type":        "telegram",
			"allow_from":  allow,
			"typing":      map[string]any{"enabled": true},
			"placeholder": map[string]any{"enabled": true, "text": []string{peerPlaceholder}},
			"settings":    settings,
		}},
		"gateway": map[string]any{"host": "127.0.0.1", "port": gatewayPort, "log_level": "warn"},
	}
}

// setPeerEnv writes the peer's configuration into b.dir and sets its
// environment and command line.
func (b *bench) setPeerEnv() error {
	home := filepath.Join(b.dir, "picoclaw")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	_, portStr, _ := strings.Cut(addr, ":")
	port, _ := strconv.Atoi(portStr)
	cfg := picoclawConfig(home, b.tg.srv.URL, b.llm.srv.URL, b.o.chats, b.o.workers, b.o.peerStream, port)
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), raw, 0o600); err != nil {
		return err
	}
	b.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + b.dir,
		"PICOCLAW_HOME=" + home,
	}
	if lvl := os.Getenv("PICOCLAW_LOG_LEVEL"); lvl != "" { // to see why a reply is missing (with -keep)
		b.env = append(b.env, "PICOCLAW_LOG_LEVEL="+lvl)
	}
	b.bin, b.runArgs = b.o.peerBin, []string{"gateway"}
	return nil
}

// peerSetup runs `picoclaw onboard` on the written config: it keeps the
// config and lays out the workspace templates (AGENTS.md, SOUL.md, …) a
// real installation has, which go into PicoClaw's system prompt. It is
// timed like `kairos migrate`.
func (b *bench) peerSetup() error {
	t := time.Now()
	cmd := exec.Command(b.bin, "onboard")
	cmd.Env = b.env
	cmd.Stdin = nil
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("picoclaw onboard: %v\n%s", err, out)
	}
	b.migrated = time.Since(t)
	if _, err := os.Stat(filepath.Join(b.dir, "picoclaw", "workspace")); err != nil {
		return fmt.Errorf("picoclaw onboard made no workspace: %w", err)
	}
	return nil
}

// peerMethod answers the Bot API methods only a peer calls (PicoClaw
// through telego); anything else is a 404 the report lists.
func (tg *telegram) peerMethod(w http.ResponseWriter, method string) {
	switch method {
	case "getMyCommands":
		writeAPI(w, 200, []any{}, "")
	case "sendMessageDraft", "setMessageReaction":
		writeAPI(w, 200, true, "")
	default:
		writeAPI(w, 404, nil, "Not Found: method "+method)
	}
}

// deleteMessage removes one of the bot's messages, as Telegram does: a
// deleted placeholder (PicoClaw deletes its "Thinking…" when it streams)
// is neither a reply nor stale.
func (tg *telegram) deleteMessage(w http.ResponseWriter, p map[string]json.RawMessage) {
	k := msgKey{intParam(p, "chat_id"), intParam(p, "message_id")}
	tg.mu.Lock()
	_, ok := tg.msgs[k]
	delete(tg.msgs, k)
	tg.mu.Unlock()
	if !ok {
		writeAPI(w, 400, nil, "Bad Request: message to delete not found")
		return
	}
	writeAPI(w, 200, true, "")
}

// printAllCalls prints every Bot API method the agent called, with the
// ones the fake does not know marked.
func (tg *telegram) printAllCalls() {
	names := make([]string, 0, len(tg.calls))
	for m := range tg.calls {
		names = append(names, m)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = fmt.Sprintf("%s %d", m, tg.calls[m])
		if !knownMethod(m) {
			parts[i] += " (unknown to the fake: 404)"
		}
	}
	fmt.Printf("Bot API calls, all: %s\n", strings.Join(parts, ", "))
}

func knownMethod(m string) bool {
	switch m {
	case "getMe", "getUpdates", "sendMessage", "editMessageText", "setMyCommands", "deleteWebhook",
		"sendChatAction", "answerCallbackQuery", "deleteMessage", "getMyCommands", "sendMessageDraft", "setMessageReaction":
		return true
	}
	return false
}

// coverage records which of the load's messages the model saw, in any
// request: an agent that folds messages arriving during a turn into that
// turn (PicoClaw's "steering") answers several messages with one reply,
// and the echo model echoes only the last, so the others count as lost
// replies although the model saw them.
type coverage struct {
	mu   sync.Mutex
	seen map[string]int // user text → requests that carried it
	last []byte         // the last request body (-request-sample)
}

var loadText = regexp.MustCompile(`load \d+ m\d+`)

func (c *coverage) note(body []byte) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = body
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		// An agent may wrap the text (a time stamp, a sender line) or
		// join several messages: find the load's texts inside.
		for _, t := range loadText.FindAllString(contentText(m.Content), -1) {
			c.seen[t]++
		}
	}
}

// printCoverage prints how many of the load's messages reached the model,
// and writes the last request body to sample if it is set.
func (m *model) printCoverage(total int, sample string) {
	m.cover.mu.Lock()
	defer m.cover.mu.Unlock()
	fmt.Printf("messages the model saw: %d of %d, in %d requests\n", len(m.cover.seen), total, m.requests)
	if sample != "" && m.cover.last != nil {
		if err := os.WriteFile(sample, m.cover.last, 0o644); err != nil {
			fmt.Println("request sample:", err)
		}
	}
}

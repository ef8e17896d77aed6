package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"
)

// The mixed soak (-mix): -chats users, each at a human pace (it waits for
// the answer to its message, then thinks 2–8 s), send a mix of plain text
// the model echoes (ECHO, whose latency is the point), code cells,
// searches, memory stores and recalls, reminders a minute ahead (approved
// by pressing the button) and voice notes, for -duration. It reports per
// kind the push → reply latency, and for ECHO also the latency inside
// kairos.

var (
	mixMode     = flag.Bool("mix", false, "mixed soak: -chats users at a human pace sending text, cells, searches, memory, reminders and voice for -duration")
	mixDuration = flag.Duration("duration", 15*time.Minute, "how long the mixed soak pushes (-mix)")
	mixSeed     = flag.Uint64("seed", 1, "random seed of the mixed soak (-mix)")
	mixLogLevel = flag.String("log-level", "warn", "KAIROS_LOG_LEVEL of the mixed soak (-mix; debug logs each stage)")
	mixRTrace   = flag.String("trace", "", "with -mix: save kairos's runtime trace (KAIROS_PPROF=on) of the soak's first -trace-for to this file, for go tool trace -pprof=sync|sched|syscall")
	mixRTraceD  = flag.Duration("trace-for", time.Minute, "how much of the soak -trace records")
	mixTrace    = flag.String("slow", "", "with -mix: write the slow ECHO turns (push, delivery, reply, the chat's other traffic around them) to this file")
)

const (
	kindEcho     = "echo"
	kindCell     = "cell"
	kindSearch   = "search"
	kindRemember = "remember"
	kindRecall   = "recall"
	kindRemind   = "remind"
	kindVoice    = "voice"
	kindFire     = "fire" // a reminder arriving (not pushed)
)

// mixWeights is the share of each pushed kind, in percent.
var mixWeights = []struct {
	kind string
	w    int
}{{kindEcho, 60}, {kindCell, 10}, {kindSearch, 8}, {kindRemember, 5}, {kindRecall, 5}, {kindRemind, 4}, {kindVoice, 8}}

// soak is the state of one mixed soak.
type soak struct {
	b *bench

	mu       sync.Mutex
	sent     map[string]*sentMsg      // token → what was pushed
	seen     map[string]time.Time     // token → first complete message naming it
	waiters  map[string]chan struct{} // token → closed when seen
	sends    map[int64][]time.Time    // chat → every message the bot sent it (for -slow)
	approved int
}

type sentMsg struct {
	kind   string
	chat   int64
	update int64
	pushed time.Time
}

func newSoak(b *bench) *soak {
	return &soak{b: b, sent: map[string]*sentMsg{}, seen: map[string]time.Time{}, waiters: map[string]chan struct{}{}, sends: map[int64][]time.Time{}}
}

// sawSend notes a sendMessage: a complete reply (or a reminder) names its
// token; an approval request is pressed after a human half second.
func (s *soak) sawSend(chat int64, text string, markup json.RawMessage) {
	now := time.Now()
	s.mu.Lock()
	s.sends[chat] = append(s.sends[chat], now)
	s.mu.Unlock()
	if data, ok := approveData(markup); ok {
		s.mu.Lock()
		s.approved++
		s.mu.Unlock()
		time.AfterFunc(500*time.Millisecond, func() { s.b.tg.pressApprove(chat, s.b.tg.lastMessage(chat, text), data) })
		return
	}
	s.sawText(text, now)
}

func (s *soak) sawEdit(text string) {
	if !strings.Contains(text, "kxfire_") { // an approval request edited after the press
		s.sawText(text, time.Now())
	}
}

func (s *soak) sawText(text string, now time.Time) {
	if strings.HasSuffix(text, placeholderSuffix) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range tokenRe.FindAllString(text, -1) {
		if _, ok := s.seen[tok]; ok {
			continue
		}
		s.seen[tok] = now
		if ch, ok := s.waiters[tok]; ok {
			close(ch)
			delete(s.waiters, tok)
		}
	}
}

// push sends one message of kind as chat's user and returns a channel
// closed when its reply is seen.
func (s *soak) push(chat int64, n int, kind string) chan struct{} {
	tok := fmt.Sprintf("kx%s_%d_%d", kind, chat, n)
	ch := make(chan struct{})
	s.mu.Lock()
	s.waiters[tok] = ch
	s.mu.Unlock()
	var id int64
	if kind == kindVoice {
		id = s.b.tg.pushUpdate(chat, "message", map[string]any{"voice": map[string]any{
			"file_id": tok, "file_unique_id": "u" + tok, "duration": 2, "mime_type": "audio/ogg", "file_size": len(tok)}})
	} else {
		id = s.b.tg.pushUpdate(chat, "message", map[string]any{"text": textFor(kind, tok)})
	}
	s.mu.Lock()
	s.sent[tok] = &sentMsg{kind: kind, chat: chat, update: id, pushed: s.b.tg.pushedAt[id]}
	s.mu.Unlock()
	return ch
}

func textFor(kind, tok string) string {
	switch kind {
	case kindCell:
		return "please compute this for me " + tok
	case kindSearch:
		return "look up the weather " + tok
	case kindRemember:
		return "remember that I like tea " + tok
	case kindRecall:
		return "what do I like to drink? " + tok
	case kindRemind:
		return "remind me in a minute to stretch " + tok
	}
	return "hello there, how are you " + tok
}

// user is one human: push, wait for the answer (a minute at most), think
// 2–8 s, until end.
func (s *soak) user(chat int64, end time.Time, r *rand.Rand, wg *sync.WaitGroup) {
	defer wg.Done()
	time.Sleep(time.Duration(r.Int64N(int64(5 * time.Second)))) // users do not start in step
	for n := 0; time.Now().Before(end); n++ {
		ch := s.push(chat, n, pickKind(r))
		select {
		case <-ch:
		case <-time.After(time.Minute):
		}
		time.Sleep(2*time.Second + time.Duration(r.Int64N(int64(6*time.Second))))
	}
}

func pickKind(r *rand.Rand) string {
	x := r.IntN(100)
	for _, k := range mixWeights {
		if x < k.w {
			return k.kind
		}
		x -= k.w
	}
	return kindEcho
}

// runMix is the mixed soak: the flood's kairos process and fakes, with
// mix_fakes.go's additions, driven by -chats users for -duration.
func runMix(o options) error {
	dir, cleanup, err := workDir(&o, "kairos-soak-")
	if err != nil {
		return err
	}
	defer cleanup()
	tg := newTelegram(fakeToken)
	defer tg.close()
	llm := &model{other: map[string]int{}}
	llm.srv = httptest.NewServer(&mixModel{m: llm})
	defer llm.close()
	search := httptest.NewServer(http.HandlerFunc(searchHandler))
	defer search.Close()
	b := &bench{o: o, dir: dir, tg: tg, llm: llm, progress: make(chan struct{}, 1), bin: o.bin, runArgs: []string{"run"}}
	s := newSoak(b)
	tg.srv.Config.Handler = &mixTelegram{tg: tg, soak: s}
	if err := b.setEnv(); err != nil {
		return err
	}
	// The later value of a variable wins.
	b.env = append(b.env, "KAIROS_SEARCH_URL="+search.URL, "KAIROS_LOG_LEVEL="+*mixLogLevel, "KAIROS_LOG_FORMAT=json")
	if *mixRTrace != "" {
		if b.adminAddr, err = freeAddr(); err != nil {
			return err
		}
		b.env = append(b.env, "KAIROS_PPROF=on", "KAIROS_HTTP_ADDR="+b.adminAddr)
	}
	defer b.shutdown()
	if err := b.launch(b.migrate); err != nil {
		return err
	}
	if err := s.drive(); err != nil {
		return err
	}
	b.stop()
	s.report()
	return nil
}

// drive runs the users for -duration, then waits for the last answers and
// for the reminders still due (70 s at most).
func (s *soak) drive() error {
	b := s.b
	b.loadStart = time.Now()
	end := b.loadStart.Add(*mixDuration)
	traced := make(chan error, 1)
	if *mixRTrace != "" {
		go func() {
			traced <- fetchTo(*mixRTrace, fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", b.adminAddr, int(mixRTraceD.Seconds())))
		}()
	} else {
		traced <- nil
	}
	defer func() {
		if err := <-traced; err != nil {
			fmt.Fprintln(os.Stderr, "load: trace:", err)
		}
	}()
	var wg sync.WaitGroup
	for c := range b.o.chats {
		wg.Add(1)
		go s.user(int64(10001+c), end, rand.New(rand.NewPCG(*mixSeed, uint64(c))), &wg)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case err := <-b.exited:
		return fmt.Errorf("kairos exited under load (%v); log:\n%s", err, tail(b.logf.Name()))
	}
	deadline := time.Now().Add(70 * time.Second)
	for time.Now().Before(deadline) && s.firesPending() > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// firesPending counts the reminders approved but not yet arrived.
func (s *soak) firesPending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok, m := range s.sent {
		if m.kind != kindRemind {
			continue
		}
		if _, ok := s.seen[tok]; !ok {
			continue // never created
		}
		if _, ok := s.seen[fireToken(tok)]; !ok {
			n++
		}
	}
	return n
}

func fireToken(remindTok string) string {
	return "kxfire_" + strings.TrimPrefix(remindTok, "kx"+kindRemind+"_")
}

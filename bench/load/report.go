package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// report prints the figures of the run (the format is described in
// doc/benchmarks.md), and kairos's log tail when a reply was lost,
// doubled or out of order.
func (b *bench) report() error {
	b.tg.mu.Lock()
	defer b.tg.mu.Unlock()
	b.printSetting()
	r := collectReplies(b.tg, b.load)
	f := countFaults(b.tg, r.wantOrder)

	b.printStartup()
	r.printThroughput(b.o.chats*b.o.messages, b.loadStart)
	r.printLatencies()
	r.printFairness(b.o.chats, b.loadStart)
	fmt.Printf("lost %d, doubled %d, stale placeholders %d, out of order chats %d, other bot messages %d\n", f.lost, f.doubled, f.stale, f.outOfOrder, f.other)
	b.printCosts()
	b.tg.printAllCalls()
	b.llm.printCoverage(len(b.load), b.o.requestSample)
	if f.lost > 0 || f.doubled > 0 || f.outOfOrder > 0 {
		logPath := b.logf.Name()
		fmt.Printf("kairos log tail (%s):\n%s\n", logPath, tail(logPath))
	}
	return nil
}

// printSetting prints what was run, and why it stopped early if it did.
func (b *bench) printSetting() {
	o := b.o
	limits := "on"
	if !o.limits {
		limits = "off (KAIROS_SEND_LIMITS=off)"
	}
	if o.peer != "" {
		limits = "as built into " + o.peerBin
		fmt.Printf("agent: %s (%s), not kairos\n", o.peer, o.peerBin)
	}
	workers := "default"
	if o.workers > 0 {
		workers = strconv.Itoa(o.workers)
	}
	push := "flood (all at once)"
	if o.rate > 0 {
		push = fmt.Sprintf("%.0f/s", o.rate)
	}
	if o.closed {
		push = fmt.Sprintf("closed loop (next message %v after the reply)", o.think)
	}
	fmt.Printf("load: %d chats × %d messages = %d, push %s, send limits %s, workers %s, database %s\n",
		o.chats, o.messages, o.chats*o.messages, push, limits, workers, map[bool]string{true: "PostgreSQL", false: "SQLite"}[o.databaseURL != ""])
	if b.stopReason != "" {
		fmt.Println("stopped early:", b.stopReason)
	}
}

// printStartup prints the migration's time and the start-up's.
func (b *bench) printStartup() {
	db := "existing database"
	if !b.o.migrate {
		db = "empty database, migrations included"
	} else {
		fmt.Printf("%s on an empty database: %s (whole process)\n", map[bool]string{false: "kairos migrate", true: "picoclaw onboard"}[b.o.peer != ""], ms(b.migrated))
	}
	fmt.Printf("start to first getUpdates (%s): %s (first Bot API call, getMe, at %s)\n", db, ms(b.tg.firstPoll.Sub(b.started)), ms(b.tg.firstCall.Sub(b.started)))
}

// printCosts prints the Bot API and model calls, kairos's memory and
// CPU, the harness's CPU and the machine's load.
func (b *bench) printCosts() {
	tg := b.tg
	fmt.Printf("Bot API calls: sendMessage %d, editMessageText %d, sendChatAction %d, getUpdates %d; model requests %d\n",
		tg.calls["sendMessage"], tg.calls["editMessageText"], tg.calls["sendChatAction"], tg.calls["getUpdates"], b.llm.requests)
	if b.llm.requests > 0 {
		fmt.Printf("model request bodies: mean %.1f KB, largest %.1f KB\n",
			float64(b.llm.bytes)/float64(b.llm.requests)/1024, float64(b.llm.maxBytes)/1024)
	}
	fmt.Printf("RSS: idle %.1f MB (VmRSS after %v), peak %.1f MB (VmHWM); CPU %.2f s over the run; threads %d\n",
		float64(b.idle.rssKB)/1024, b.o.settle, float64(b.peak.hwmKB)/1024, b.peak.cpu.Seconds(), b.peak.threads)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("harness (fakes and this program) CPU: %.2f s\n", time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s\n", strings.Join(strings.Fields(string(la))[:3], " "))
	}
	if len(b.llm.other) > 0 {
		fmt.Printf("model: unexpected paths %v\n", b.llm.other)
	}
}

// replies is what the fake saw of the load's replies, per update: push →
// complete reply (end to end) and first delivery to kairos → complete
// reply (inside kairos).
type replies struct {
	e2e, inside []time.Duration       // sorted
	last        time.Time             // the last reply seen
	perChat     map[int64][]time.Time // chat → when its replies were seen
	wantOrder   map[int64][]string    // chat → its replies in push order
	answered    int                   // messages with a reply
}

// collectReplies reads the replies to load off tg (its lock held).
func collectReplies(tg *telegram, load []msg) replies {
	r := replies{perChat: map[int64][]time.Time{}, wantOrder: map[int64][]string{}}
	for _, m := range load {
		chat := m.chat
		text := "echo: " + m.text
		id := tg.idOf[m.text]
		r.wantOrder[chat] = append(r.wantOrder[chat], text)
		at, ok := tg.done[text]
		pushed, pok := tg.pushedAt[id]
		if !ok || !pok {
			continue
		}
		r.answered++
		r.e2e = append(r.e2e, at.Sub(pushed))
		if d, ok := tg.deliverAt[id]; ok {
			r.inside = append(r.inside, at.Sub(d))
		}
		if at.After(r.last) {
			r.last = at
		}
		r.perChat[chat] = append(r.perChat[chat], at)
	}
	slices.Sort(r.e2e)
	slices.Sort(r.inside)
	return r
}

// printThroughput prints the replies over the time from the first push
// to the last reply, and the sustained rate.
func (r replies) printThroughput(total int, loadStart time.Time) {
	span := r.last.Sub(loadStart)
	fmt.Printf("answered %d/%d in %.2f s: throughput %.1f replies/s\n", r.answered, total, span.Seconds(), float64(r.answered)/span.Seconds())
	if r.answered < 10 {
		return
	}
	// Sustained: the rate between the 10th and 90th percentile of
	// completion times (without the ramp-up and the tail).
	var ats []time.Time
	for _, ts := range r.perChat {
		ats = append(ats, ts...)
	}
	slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
	lo, hi := len(ats)/10, len(ats)*9/10
	if d := ats[hi].Sub(ats[lo]); d > 0 {
		fmt.Printf("sustained (10%%–90%% of replies): %.1f replies/s\n", float64(hi-lo)/d.Seconds())
	}
}

func (r replies) printLatencies() {
	fmt.Printf("end-to-end latency (push → reply seen): p50 %s  p95 %s  p99 %s  max %s\n", ms(pct(r.e2e, 50)), ms(pct(r.e2e, 95)), ms(pct(r.e2e, 99)), ms(pct(r.e2e, 100)))
	fmt.Printf("inside kairos (first getUpdates delivery → reply seen): p50 %s  p95 %s  p99 %s  max %s\n", ms(pct(r.inside, 50)), ms(pct(r.inside, 95)), ms(pct(r.inside, 99)), ms(pct(r.inside, 100)))
}

// printFairness prints when each chat got its first and its last reply.
func (r replies) printFairness(chats int, loadStart time.Time) {
	var firsts, lasts []time.Duration
	for _, ts := range r.perChat {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		firsts = append(firsts, ts[0].Sub(loadStart))
		lasts = append(lasts, ts[len(ts)-1].Sub(loadStart))
	}
	slices.Sort(firsts)
	slices.Sort(lasts)
	if len(firsts) > 0 {
		fmt.Printf("fairness: chats answered %d/%d; first reply per chat by %s (max), last reply per chat between %s and %s\n",
			len(r.perChat), chats, ms(firsts[len(firsts)-1]), ms(lasts[0]), ms(lasts[len(lasts)-1]))
	}
}

// faults counts what went wrong with the replies.
type faults struct {
	lost, doubled int // replies never complete, completes beyond the first
	stale         int // replies with a streaming placeholder left behind
	outOfOrder    int // chats whose replies completed out of push order
	other         int // bot messages that are no reply of the load
}

// countFaults counts lost, doubled and stale placeholders from the final
// state of every bot message, and the chats answered out of order (tg's
// lock held).
func countFaults(tg *telegram, wantOrder map[int64][]string) faults {
	var f faults
	complete := map[string]int{}
	stale := map[string]int{}
	for _, m := range tg.msgs {
		if m.text == peerPlaceholder { // PicoClaw's, never edited into a reply
			f.stale++
			continue
		}
		if t, ok := strings.CutSuffix(m.text, placeholderSuffix); ok {
			stale[t]++
			continue
		}
		if strings.HasPrefix(m.text, "echo: load ") {
			complete[m.text]++
			continue
		}
		f.other++
	}
	for _, texts := range wantOrder {
		for _, t := range texts {
			switch {
			case complete[t] == 0:
				f.lost++
			case complete[t] > 1:
				f.doubled += complete[t] - 1
			}
			if stale[t] > 0 {
				f.stale++
			}
		}
	}
	for chat, want := range wantOrder {
		if !inOrder(tg.chatOrder[chat], want) {
			f.outOfOrder++
		}
	}
	return f
}

// inOrder reports whether got is a subsequence of want.
func inOrder(got, want []string) bool {
	j := 0
	for _, t := range got {
		for j < len(want) && want[j] != t {
			j++
		}
		if j == len(want) {
			return false
		}
	}
	return true
}

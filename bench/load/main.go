package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	bin         string
	chats       int
	messages    int
	workers     int
	limits      bool
	rate        float64
	settle      time.Duration
	timeout     time.Duration
	stall       time.Duration
	databaseURL string
	keep        bool
	migrate     bool
	cpuProfile  string
	heapProfile string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "kairos binary (built from ./cmd/kairos with -tags sqlite_fts5 when empty)")
	flag.IntVar(&o.chats, "chats", 50, "number of private chats (N)")
	flag.IntVar(&o.messages, "messages", 20, "messages per chat (M)")
	flag.IntVar(&o.workers, "workers", 0, "KAIROS_WORKERS (0: kairos's default)")
	flag.BoolVar(&o.limits, "limits", true, "keep Telegram's outbound limits on (false sets KAIROS_SEND_LIMITS=off)")
	flag.Float64Var(&o.rate, "rate", 0, "messages per second to push (0: push all at once, a flood)")
	flag.DurationVar(&o.settle, "settle", time.Second, "idle time after the first getUpdates before the idle RSS sample")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.DurationVar(&o.stall, "stall", 60*time.Second, "give up when no reply arrives for this long")
	flag.StringVar(&o.databaseURL, "database-url", "", "KAIROS_DATABASE_URL (PostgreSQL); SQLite in a temporary directory when empty")
	flag.BoolVar(&o.migrate, "migrate", true, "run `kairos migrate` before `kairos run`, so the start-up time is that of a restart, not of a first start on an empty database")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write kairos's CPU profile of the whole run to this file (KAIROS_CPU_PROFILE)")
	flag.StringVar(&o.heapProfile, "heapprofile", "", "write kairos's heap profile at idle (after -settle, before the load) to this file (KAIROS_PPROF=on)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (database and kairos.log)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// msg is one message of the load.
type msg struct {
	chat int64
	text string
}

func run(o options) error {
	if o.chats <= 0 || o.messages <= 0 {
		return errors.New("-chats and -messages must be positive")
	}
	dir, err := os.MkdirTemp("", "kairos-load-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if o.bin == "" {
		o.bin = filepath.Join(dir, "kairos")
		out, err := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", o.bin, "./cmd/kairos").CombinedOutput()
		if err != nil {
			return fmt.Errorf("go build ./cmd/kairos (run from the module root, or pass -bin): %v\n%s", err, out)
		}
	}

	const token = "777000:LOAD-fake-bot-token"
	tg := newTelegram(token)
	defer tg.close()
	llm := newModel()
	defer llm.close()

	// The load: chat c (ids from 10001) sends messages 0..M-1; each text
	// is unique, so its echo identifies the reply.
	var load []msg
	users := make([]string, o.chats)
	for c := range o.chats {
		users[c] = strconv.Itoa(10001 + c)
	}
	for i := range o.messages {
		for c := range o.chats {
			load = append(load, msg{chat: int64(10001 + c), text: fmt.Sprintf("load %d m%d", 10001+c, i)})
		}
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("access:\n  allowed_users: ["+strings.Join(users, ", ")+"]\n"), 0o600); err != nil {
		return err
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TELEGRAM_BOT_TOKEN=" + token,
		"TELEGRAM_API_URL=" + tg.srv.URL,
		"OPENAI_BASE_URL=" + llm.srv.URL + "/v1",
		"OPENAI_API_KEY=sk-load-test",
		"KAIROS_MODEL=load-model",
		"KAIROS_DATA_DIR=" + filepath.Join(dir, "data"),
		"KAIROS_POLICY=" + policy,
		"KAIROS_SEARCH_URL=http://127.0.0.1:1",
		"KAIROS_LOG_LEVEL=warn",
	}
	adminAddr := "127.0.0.1:0"
	if o.heapProfile != "" {
		if adminAddr, err = freeAddr(); err != nil {
			return err
		}
		env = append(env, "KAIROS_PPROF=on")
	}
	env = append(env, "KAIROS_HTTP_ADDR="+adminAddr)
	if o.cpuProfile != "" {
		abs, err := filepath.Abs(o.cpuProfile)
		if err != nil {
			return err
		}
		env = append(env, "KAIROS_CPU_PROFILE="+abs)
	}
	if o.workers > 0 {
		env = append(env, "KAIROS_WORKERS="+strconv.Itoa(o.workers))
	}
	if !o.limits {
		env = append(env, "KAIROS_SEND_LIMITS=off")
	}
	if o.databaseURL != "" {
		env = append(env, "KAIROS_DATABASE_URL="+o.databaseURL)
	}
	logf, err := os.Create(filepath.Join(dir, "kairos.log"))
	if err != nil {
		return err
	}
	defer logf.Close()

	progress := make(chan struct{}, 1)
	tg.onComplete = func(string, time.Time) {
		select {
		case progress <- struct{}{}:
		default:
		}
	}

	var migrated time.Duration
	if o.migrate {
		t := time.Now()
		mig := exec.Command(o.bin, "migrate")
		mig.Env = env
		if out, err := mig.CombinedOutput(); err != nil {
			return fmt.Errorf("kairos migrate: %v\n%s", err, out)
		}
		migrated = time.Since(t)
	}

	cmd := exec.Command(o.bin, "run")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	}()

	// Start-up: the first getUpdates.
	deadline := time.Now().Add(30 * time.Second)
	for {
		tg.mu.Lock()
		fp := tg.firstPoll
		tg.mu.Unlock()
		if !fp.IsZero() {
			break
		}
		select {
		case err := <-exited:
			return fmt.Errorf("kairos exited during start-up (%v); log:\n%s", err, tail(logf.Name()))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no getUpdates within 30 s; log:\n%s", tail(logf.Name()))
		}
	}
	time.Sleep(o.settle)
	idle := readStatus(pid)
	if o.heapProfile != "" {
		if err := fetchTo(o.heapProfile, "http://"+adminAddr+"/debug/pprof/heap"); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
	}

	// Drive the load.
	loadStart := time.Now()
	go func() {
		for i, m := range load {
			if o.rate > 0 {
				due := loadStart.Add(time.Duration(float64(i) / o.rate * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
			}
			tg.push(m.chat, m.text)
		}
	}()

	total := time.NewTimer(o.timeout)
	defer total.Stop()
	var stopReason string
wait:
	for {
		tg.mu.Lock()
		n := len(tg.done)
		tg.mu.Unlock()
		if n >= len(load) {
			break
		}
		select {
		case <-progress:
		case <-time.After(o.stall):
			stopReason = fmt.Sprintf("no reply for %v", o.stall)
			break wait
		case <-total.C:
			stopReason = fmt.Sprintf("timeout %v", o.timeout)
			break wait
		case err := <-exited:
			return fmt.Errorf("kairos exited under load (%v); log:\n%s", err, tail(logf.Name()))
		}
	}
	// A short grace period catches late doubles.
	time.Sleep(500 * time.Millisecond)
	peak := readStatus(pid)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		stopReason += " (kairos ignored SIGTERM for 30 s)"
	}

	return report(o, tg, llm, load, migrated, started, loadStart, idle, peak, stopReason, logf.Name())
}

// status is a sample of /proc/<pid>/status and /proc/<pid>/stat.
type status struct {
	rssKB, hwmKB int64
	cpu          time.Duration
	threads      int64
}

func readStatus(pid int) status {
	var s status
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			s.rssKB = n
		case "VmHWM":
			s.hwmKB = n
		case "Threads":
			s.threads = n
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the command name in parentheses; utime and stime
		// are the 14th and 15th fields, in clock ticks (100 per second
		// on Linux).
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			fs := strings.Fields(string(b)[i+1:])
			if len(fs) > 13 {
				ut, _ := strconv.ParseInt(fs[11], 10, 64)
				st, _ := strconv.ParseInt(fs[12], 10, 64)
				s.cpu = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
	}
	return s
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// fetchTo saves the body of a GET to path.
func fetchTo(path, url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func report(o options, tg *telegram, llm *model, load []msg, migrated time.Duration, started, loadStart time.Time, idle, peak status, stopReason, logPath string) error {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	limits := "on"
	if !o.limits {
		limits = "off (KAIROS_SEND_LIMITS=off)"
	}
	workers := "default"
	if o.workers > 0 {
		workers = strconv.Itoa(o.workers)
	}
	push := "flood (all at once)"
	if o.rate > 0 {
		push = fmt.Sprintf("%.0f/s", o.rate)
	}
	total := o.chats * o.messages
	fmt.Printf("load: %d chats × %d messages = %d, push %s, send limits %s, workers %s, database %s\n",
		o.chats, o.messages, total, push, limits, workers, map[bool]string{true: "PostgreSQL", false: "SQLite"}[o.databaseURL != ""])
	if stopReason != "" {
		fmt.Println("stopped early:", stopReason)
	}

	// Per update: push → complete reply (end to end) and first delivery
	// to kairos → complete reply (inside kairos).
	var e2e, inside []time.Duration
	var first, last time.Time
	perChat := map[int64][]time.Time{}
	var wantOrder = map[int64][]string{}
	answered := 0
	for _, m := range load {
		chat := m.chat
		text := "echo: " + m.text
		id := tg.idOf[m.text]
		wantOrder[chat] = append(wantOrder[chat], text)
		at, ok := tg.done[text]
		pushed, pok := tg.pushedAt[id]
		if !ok || !pok {
			continue
		}
		answered++
		e2e = append(e2e, at.Sub(pushed))
		if d, ok := tg.deliverAt[id]; ok {
			inside = append(inside, at.Sub(d))
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		perChat[chat] = append(perChat[chat], at)
	}
	// Lost, doubled and stale placeholders, from the final state of every
	// bot message.
	complete := map[string]int{}
	stale := map[string]int{}
	other := 0
	for _, m := range tg.msgs {
		if t, ok := strings.CutSuffix(m.text, placeholderSuffix); ok {
			stale[t]++
			continue
		}
		if strings.HasPrefix(m.text, "echo: load ") {
			complete[m.text]++
			continue
		}
		other++
	}
	lost, doubled, stalePh := 0, 0, 0
	for _, texts := range wantOrder {
		for _, t := range texts {
			switch {
			case complete[t] == 0:
				lost++
			case complete[t] > 1:
				doubled += complete[t] - 1
			}
			if stale[t] > 0 {
				stalePh++
			}
		}
	}
	outOfOrder := 0
	for chat, want := range wantOrder {
		got := tg.chatOrder[chat]
		j := 0
		for _, t := range got {
			for j < len(want) && want[j] != t {
				j++
			}
			if j == len(want) {
				outOfOrder++
				break
			}
		}
	}

	slices.Sort(e2e)
	slices.Sort(inside)
	span := last.Sub(loadStart)
	db := "existing database"
	if !o.migrate {
		db = "empty database, migrations included"
	} else {
		fmt.Printf("kairos migrate on an empty database: %s (whole process)\n", ms(migrated))
	}
	fmt.Printf("start to first getUpdates (%s): %s (first Bot API call, getMe, at %s)\n", db, ms(tg.firstPoll.Sub(started)), ms(tg.firstCall.Sub(started)))
	fmt.Printf("answered %d/%d in %.2f s: throughput %.1f replies/s\n", answered, total, span.Seconds(), float64(answered)/span.Seconds())
	if answered >= 10 {
		// Sustained: the rate between the 10th and 90th percentile of
		// completion times (without the ramp-up and the tail).
		var ats []time.Time
		for _, ts := range perChat {
			ats = append(ats, ts...)
		}
		slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
		lo, hi := len(ats)/10, len(ats)*9/10
		if d := ats[hi].Sub(ats[lo]); d > 0 {
			fmt.Printf("sustained (10%%–90%% of replies): %.1f replies/s\n", float64(hi-lo)/d.Seconds())
		}
	}
	fmt.Printf("end-to-end latency (push → reply seen): p50 %s  p95 %s  p99 %s  max %s\n", ms(pct(e2e, 50)), ms(pct(e2e, 95)), ms(pct(e2e, 99)), ms(pct(e2e, 100)))
	fmt.Printf("inside kairos (first getUpdates delivery → reply seen): p50 %s  p95 %s  p99 %s  max %s\n", ms(pct(inside, 50)), ms(pct(inside, 95)), ms(pct(inside, 99)), ms(pct(inside, 100)))
	// Fairness: when each chat got its first and its last reply.
	var firsts, lasts []time.Duration
	for _, ts := range perChat {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		firsts = append(firsts, ts[0].Sub(loadStart))
		lasts = append(lasts, ts[len(ts)-1].Sub(loadStart))
	}
	slices.Sort(firsts)
	slices.Sort(lasts)
	if len(firsts) > 0 {
		fmt.Printf("fairness: chats answered %d/%d; first reply per chat by %s (max), last reply per chat between %s and %s\n",
			len(perChat), o.chats, ms(firsts[len(firsts)-1]), ms(lasts[0]), ms(lasts[len(lasts)-1]))
	}
	fmt.Printf("lost %d, doubled %d, stale placeholders %d, out of order chats %d, other bot messages %d\n", lost, doubled, stalePh, outOfOrder, other)
	fmt.Printf("Bot API calls: sendMessage %d, editMessageText %d, sendChatAction %d, getUpdates %d; model requests %d\n",
		tg.calls["sendMessage"], tg.calls["editMessageText"], tg.calls["sendChatAction"], tg.calls["getUpdates"], llm.requests)
	fmt.Printf("RSS: idle %.1f MB (VmRSS after %v), peak %.1f MB (VmHWM); CPU %.2f s over the run; threads %d\n",
		float64(idle.rssKB)/1024, o.settle, float64(peak.hwmKB)/1024, peak.cpu.Seconds(), peak.threads)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("harness (fakes and this program) CPU: %.2f s\n", time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s\n", strings.Join(strings.Fields(string(la))[:3], " "))
	}
	if len(llm.other) > 0 {
		fmt.Printf("model: unexpected paths %v\n", llm.other)
	}
	if lost > 0 || doubled > 0 || outOfOrder > 0 {
		fmt.Printf("kairos log tail (%s):\n%s\n", logPath, tail(logPath))
	}
	return nil
}

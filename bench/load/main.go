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
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	bin         string
	copyBin     bool
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
	godebug     string

	peerOptions // peer.go: -peer, -closed, …
}

func main() {
	var o options
	flag.BoolVar(&o.copyBin, "copy", true, "run the agents from copies written 4 KiB at a time (fresh builds idle larger: large page-cache folios)")
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
	flag.StringVar(&o.godebug, "godebug", "", "kairos's GODEBUG (memprofilerate=1 makes -heapprofile count every allocation, not one per 512 KB; its RSS is then not kairos's own)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (database and kairos.log)")
	peerFlags(&o)
	flag.Parse()
	runner := run
	if *mixMode {
		runner = runMix // mix.go
	}
	if err := runner(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// msg is one message of the load.
type msg struct {
	chat int64
	text string
}

// bench is one run of the load: the options, the fakes, the kairos
// process and what was measured of it.
type bench struct {
	o         options
	dir       string // the temporary directory
	tg        *telegram
	llm       *model
	load      []msg
	env       []string // kairos's whole environment
	adminAddr string   // KAIROS_HTTP_ADDR
	logf      *os.File // kairos's stdout and stderr
	progress  chan struct{}

	bin     string   // the binary run: kairos, or the peer's
	runArgs []string // its arguments: "run", or the peer's
	cmd     *exec.Cmd
	exited  chan error // cmd.Wait's result

	migrated   time.Duration // `kairos migrate`, whole process
	started    time.Time     // `kairos run` started
	loadStart  time.Time     // the first push
	idle, peak status
	stopReason string // why the wait for replies ended early, if it did
}

// fakeToken is the bot token kairos is given; only the fake Bot API sees it.
const fakeToken = "777000:LOAD-fake-bot-token"

func run(o options) error {
	if o.chats <= 0 || o.messages <= 0 {
		return errors.New("-chats and -messages must be positive")
	}
	if err := o.checkPeer(); err != nil {
		return err
	}
	dir, cleanup, err := workDir(&o, "kairos-load-")
	if err != nil {
		return err
	}
	defer cleanup()
	tg := newTelegram(o.botToken())
	defer tg.close()
	llm := newModel()
	defer llm.close()
	b := &bench{o: o, dir: dir, tg: tg, llm: llm, load: makeLoad(o.chats, o.messages), bin: o.bin, runArgs: []string{"run"}}
	setEnv, setup := b.setEnv, b.migrate
	if o.peer != "" {
		setEnv, setup = b.setPeerEnv, b.peerSetup
	}
	if err := setEnv(); err != nil {
		return err
	}
	b.watchReplies()
	defer b.shutdown()
	if err := b.launch(setup); err != nil {
		return err
	}
	b.drive()
	if err := b.awaitReplies(); err != nil {
		return err
	}
	b.stop()
	return b.report()
}

// workDir makes the run's temporary directory (kept with -keep) and
// builds kairos into it when -bin is empty.
func workDir(o *options, pattern string) (dir string, cleanup func(), err error) {
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if o.keep {
		fmt.Println("directory:", dir)
		cleanup = func() {}
	}
	if o.bin == "" && o.peer == "" {
		if o.bin, err = buildKairos(dir); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	if o.copyBin {
		for _, bin := range []*string{&o.bin, &o.peerBin} {
			if *bin == "" {
				continue
			}
			if *bin, err = copyBinary(*bin, dir); err != nil {
				cleanup()
				return "", nil, err
			}
		}
	}
	return dir, cleanup, nil
}

// copyBinary copies bin into dir in 4 KiB writes and returns the copy's
// path. The resident size of a process counts the pages of its binary it
// has mapped, and a binary the linker has just written sits in the page
// cache as large folios, which the kernel maps whole: the same binary
// idles 10 MB larger freshly linked than copied. Every agent is run from
// such a copy, so the figures do not depend on how old a build is.
func copyBinary(bin, dir string) (string, error) {
	in, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, "bin", filepath.Base(bin))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 4096)); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// launch starts the bot with b.env (after setup, `kairos migrate` or the
// peer's, unless -migrate=false), its output in kairos.log, waits for its
// first getUpdates and samples it at idle. shutdown undoes it.
func (b *bench) launch(setup func() error) error {
	var err error
	if b.logf, err = os.Create(filepath.Join(b.dir, "kairos.log")); err != nil {
		return err
	}
	if b.o.migrate {
		if err := setup(); err != nil {
			return err
		}
	}
	if err := b.start(); err != nil {
		return err
	}
	if err := b.awaitFirstPoll(); err != nil {
		return err
	}
	return b.sampleIdle()
}

// shutdown kills kairos if it still runs and closes its log.
func (b *bench) shutdown() {
	if b.exited != nil {
		b.killIfRunning()
	}
	if b.logf != nil {
		b.logf.Close()
	}
}

// buildKairos builds ./cmd/kairos into dir and returns the binary's path.
func buildKairos(dir string) (string, error) {
	bin := filepath.Join(dir, "kairos")
	out, err := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, "./cmd/kairos").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/kairos (run from the module root, or pass -bin): %v\n%s", err, out)
	}
	return bin, nil
}

// makeLoad returns the load: chat c (ids from 10001) sends messages
// 0..messages-1, round by round; each text is unique, so its echo
// identifies the reply.
func makeLoad(chats, messages int) []msg {
	var load []msg
	for i := range messages {
		for c := range chats {
			load = append(load, msg{chat: int64(10001 + c), text: fmt.Sprintf("load %d m%d", 10001+c, i)})
		}
	}
	return load
}

// writePolicy writes a policy allowing the load's chats into dir and
// returns its path.
func writePolicy(dir string, chats int) (string, error) {
	users := make([]string, chats)
	for c := range chats {
		users[c] = strconv.Itoa(10001 + c)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("access:\n  allowed_users: ["+strings.Join(users, ", ")+"]\n"), 0o600); err != nil {
		return "", err
	}
	return policy, nil
}

// setEnv writes the policy and sets kairos's environment from the options:
// the fakes' URLs, a data directory in b.dir, and what the flags turn on.
func (b *bench) setEnv() error {
	policy, err := writePolicy(b.dir, b.o.chats)
	if err != nil {
		return err
	}
	b.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + b.dir,
		"TELEGRAM_BOT_TOKEN=" + fakeToken,
		"TELEGRAM_API_URL=" + b.tg.srv.URL,
		"OPENAI_BASE_URL=" + b.llm.srv.URL + "/v1",
		"OPENAI_API_KEY=sk-load-test",
		"KAIROS_MODEL=load-model",
		"KAIROS_DATA_DIR=" + filepath.Join(b.dir, "data"),
		"KAIROS_POLICY=" + policy,
		"KAIROS_SEARCH_URL=http://127.0.0.1:1",
		"KAIROS_LOG_LEVEL=warn",
	}
	b.adminAddr = "127.0.0.1:0"
	if b.o.heapProfile != "" {
		if b.adminAddr, err = freeAddr(); err != nil {
			return err
		}
		b.env = append(b.env, "KAIROS_PPROF=on")
	}
	b.env = append(b.env, "KAIROS_HTTP_ADDR="+b.adminAddr)
	if b.o.godebug != "" {
		b.env = append(b.env, "GODEBUG="+b.o.godebug)
	}
	if b.o.cpuProfile != "" {
		abs, err := filepath.Abs(b.o.cpuProfile)
		if err != nil {
			return err
		}
		b.env = append(b.env, "KAIROS_CPU_PROFILE="+abs)
	}
	if b.o.workers > 0 {
		b.env = append(b.env, "KAIROS_WORKERS="+strconv.Itoa(b.o.workers))
	}
	if !b.o.limits {
		b.env = append(b.env, "KAIROS_SEND_LIMITS=off")
	}
	if b.o.databaseURL != "" {
		b.env = append(b.env, "KAIROS_DATABASE_URL="+b.o.databaseURL)
	}
	return nil
}

// watchReplies makes b.progress ready whenever the fake sees a complete
// reply (one pending signal at most).
func (b *bench) watchReplies() {
	b.progress = make(chan struct{}, 1)
	b.tg.onComplete = func(string, time.Time) {
		select {
		case b.progress <- struct{}{}:
		default:
		}
	}
}

// migrate runs `kairos migrate` and times the whole process.
func (b *bench) migrate() error {
	t := time.Now()
	mig := exec.Command(b.o.bin, "migrate")
	mig.Env = b.env
	if out, err := mig.CombinedOutput(); err != nil {
		return fmt.Errorf("kairos migrate: %v\n%s", err, out)
	}
	b.migrated = time.Since(t)
	return nil
}

// start starts `kairos run`, its output going to b.logf.
func (b *bench) start() error {
	b.cmd = exec.Command(b.bin, b.runArgs...)
	b.cmd.Env = b.env
	b.cmd.Stdout, b.cmd.Stderr = b.logf, b.logf
	b.started = time.Now()
	if err := b.cmd.Start(); err != nil {
		return err
	}
	b.exited = make(chan error, 1)
	go func() { b.exited <- b.cmd.Wait() }()
	return nil
}

// killIfRunning kills kairos if it has not exited yet, and waits for it.
func (b *bench) killIfRunning() {
	if b.cmd.ProcessState == nil {
		b.cmd.Process.Kill()
		<-b.exited
	}
}

// awaitFirstPoll waits (30 s at most) for kairos's first getUpdates: the
// end of its start-up.
func (b *bench) awaitFirstPoll() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.tg.mu.Lock()
		fp := b.tg.firstPoll
		b.tg.mu.Unlock()
		if !fp.IsZero() {
			return nil
		}
		select {
		case err := <-b.exited:
			return fmt.Errorf("kairos exited during start-up (%v); log:\n%s", err, tail(b.logf.Name()))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no getUpdates within 30 s; log:\n%s", tail(b.logf.Name()))
		}
	}
}

// sampleIdle lets kairos settle, samples its idle RSS and, with
// -heapprofile, saves its heap profile.
func (b *bench) sampleIdle() error {
	time.Sleep(b.o.settle)
	b.idle = readStatus(b.cmd.Process.Pid)
	if b.o.heapProfile != "" {
		if err := fetchTo(b.o.heapProfile, "http://"+b.adminAddr+"/debug/pprof/heap"); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
	}
	return nil
}

// drive pushes the load in the background: all at once, or paced at
// -rate from b.loadStart.
func (b *bench) drive() {
	if b.o.closed {
		b.driveClosed()
		return
	}
	b.loadStart = time.Now()
	go func() {
		for i, m := range b.load {
			if b.o.rate > 0 {
				due := b.loadStart.Add(time.Duration(float64(i) / b.o.rate * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
			}
			b.tg.push(m.chat, m.text)
		}
	}()
}

// awaitReplies waits until every message of the load has its reply, or
// no reply came for -stall, or -timeout passed (b.stopReason says which).
// It fails when kairos exits under load.
func (b *bench) awaitReplies() error {
	total := time.NewTimer(b.o.timeout)
	defer total.Stop()
	for {
		b.tg.mu.Lock()
		n := len(b.tg.done)
		b.tg.mu.Unlock()
		if n >= len(b.load) {
			return nil
		}
		select {
		case <-b.progress:
		case <-time.After(b.o.stall):
			b.stopReason = fmt.Sprintf("no reply for %v", b.o.stall)
			return nil
		case <-total.C:
			b.stopReason = fmt.Sprintf("timeout %v", b.o.timeout)
			return nil
		case err := <-b.exited:
			return fmt.Errorf("kairos exited under load (%v); log:\n%s", err, tail(b.logf.Name()))
		}
	}
}

// stop waits a short grace period that catches late doubles, samples the
// peak, and stops kairos with SIGTERM (SIGKILL after 30 s).
func (b *bench) stop() {
	time.Sleep(500 * time.Millisecond)
	b.peak = readStatus(b.cmd.Process.Pid)
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(30 * time.Second):
		b.cmd.Process.Kill()
		<-b.exited
		b.stopReason += " (kairos ignored SIGTERM for 30 s)"
	}
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

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// ptyChat is `kairos chat` on a pseudo-terminal, as a person runs it:
// stdin, stdout and stderr are the terminal; what it shows is read off a
// VT100 screen fed by the terminal's output.
type ptyChat struct {
	t      *testing.T
	ptmx   *os.File
	mu     sync.Mutex
	screen vt10x.Terminal
	raw    []byte // every byte the terminal was sent
	done   chan int
}

const ptyCols, ptyRows = 120, 40

func startPtyChat(t *testing.T, e *env, args ...string) *ptyChat {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: ptyRows, Cols: ptyCols}); err != nil {
		t.Fatal(err)
	}
	p := &ptyChat{t: t, ptmx: ptmx, screen: vt10x.New(vt10x.WithSize(ptyCols, ptyRows)), done: make(chan int, 1)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			p.mu.Lock()
			p.screen.Write(buf[:n])
			p.raw = append(p.raw, buf[:n]...)
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	if bin := os.Getenv("KAIROS_TEST_CHAT_BINARY"); bin != "" {
		runBinaryOnPty(t, e, bin, tty, args, p.done)
	} else {
		m := e.main()
		m.Stdin, m.Stdout, m.Stderr = tty, tty, tty
		go func() { p.done <- m.Main(context.Background(), append([]string{"chat"}, args...)) }()
	}
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		select { // a child still holding the terminal may keep the read open
		case <-copied:
		case <-time.After(5 * time.Second):
		}
	})
	p.waitScreen("the greeting", func(s string) bool { return strings.Contains(s, "Kairos: type a message") })
	return p
}

// runBinaryOnPty runs a built kairos binary's chat on the terminal, as
// its session's controlling terminal (Ctrl-C outside line editing is
// SIGINT, as in a shell). KAIROS_TEST_CHAT_BINARY=path runs these tests
// against a binary, an older one included, instead of Main in-process.
func runBinaryOnPty(t *testing.T, e *env, bin string, tty *os.File, args []string, done chan<- int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"chat"}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
}

// text is the screen, its lines without trailing blanks.
func (p *ptyChat) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(p.screen.String(), "\n") {
		lines = append(lines, strings.TrimRight(l, " \x00"))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// cursorLine is the screen line the cursor is on.
func (p *ptyChat) cursorLine() string {
	p.mu.Lock()
	y := p.screen.Cursor().Y
	p.mu.Unlock()
	lines := strings.Split(p.text()+strings.Repeat("\n", ptyRows), "\n")
	return lines[y]
}

func (p *ptyChat) keys(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.ptmx, s); err != nil {
		p.t.Fatal(err)
	}
}

func (p *ptyChat) waitScreen(what string, ok func(screen string) bool) {
	p.t.Helper()
	deadline := testkit.GiveUpAt(p.t)
	for !ok(p.text()) {
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %s:\n%s", what, p.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPrompt waits for the `> ` prompt on the cursor's line.
func (p *ptyChat) waitPrompt() {
	p.t.Helper()
	p.waitScreen("the prompt", func(string) bool { return p.cursorLine() == ">" || p.cursorLine() == "> " })
}

// sendHeld types line at the prompt and waits until the held model has
// the turn.
func (p *ptyChat) sendHeld(h *holdModel, line string) {
	p.t.Helper()
	p.waitPrompt()
	p.keys(line + "\r")
	select {
	case <-h.held:
	case <-testCtx(p.t).Done():
		p.t.Fatalf("the turn never reached the model:\n%s", p.text())
	}
}

// endWith waits for the prompt, types keys that end the chat (Ctrl-D, or
// Ctrl-C on the empty line) and checks it ended with exit 0.
func (p *ptyChat) endWith(keys string) {
	p.t.Helper()
	p.waitPrompt()
	p.keys(keys)
	if code := p.exit(); code != 0 {
		p.t.Fatalf("exit %d:\n%s", code, p.text())
	}
}

func (p *ptyChat) exit() int {
	p.t.Helper()
	select {
	case code := <-p.done:
		return code
	case <-testCtx(p.t).Done():
		p.t.Fatalf("kairos chat did not end:\n%s", p.text())
	}
	return -1
}

// echoModel answers with what the user wrote.
func echoModel(r testkit.ChatRequest) testkit.Reply {
	return testkit.TextReply("got: " + r.LastUserMessage())
}

// TestChatTerminalHomeEnd: Home and End as tmux and screen send them
// (\e[1~, \e[4~) and as rxvt does (\e[7~, \e[8~) move to the line's
// start and end (they did nothing).
func TestChatTerminalHomeEnd(t *testing.T) {
	e := chatEnv(t)
	e.llm.SetHandler(echoModel)
	p := startPtyChat(t, e)
	for _, keys := range [][2]string{{"\x1b[1~", "\x1b[4~"}, {"\x1b[7~", "\x1b[8~"}} {
		p.waitPrompt()
		p.keys("world" + keys[0] + "hello " + keys[1] + "!\r")
		p.waitScreen("the answer", func(s string) bool {
			return strings.Count(s, "got: hello world!") == map[string]int{"\x1b[1~": 1, "\x1b[7~": 2}[keys[0]]
		})
	}
	p.endWith("\x04")
}

// TestChatTerminalCtrlC: Ctrl-C on a typed line clears it and the chat
// goes on (it quit with exit 0); Ctrl-C on an empty line quits.
func TestChatTerminalCtrlC(t *testing.T) {
	e := chatEnv(t)
	e.llm.SetHandler(echoModel)
	p := startPtyChat(t, e)
	p.waitPrompt()
	p.keys("a draft I regret\x03")
	p.waitPrompt()
	p.keys("what I meant\r")
	p.waitScreen("the answer", func(s string) bool { return strings.Contains(s, "got: what I meant") })
	if strings.Contains(p.text(), "got: a draft") {
		t.Fatalf("the cleared line was sent:\n%s", p.text())
	}
	p.endWith("\x03")
}

// TestChatTerminalPromptAfterTheReply: while the model thinks no `> ` is
// shown (it was, before the reply arrived); it comes back on the line
// after the reply. The bytes the terminal got between the line sent and
// the reply are read, not the screen at some moment.
func TestChatTerminalPromptAfterTheReply(t *testing.T) {
	e := chatEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	p := startPtyChat(t, e)
	p.sendHeld(h, "hello")
	h.let()
	p.waitScreen("the reply", func(s string) bool { return strings.Contains(s, "FIRST-ANSWER") })
	p.waitPrompt()
	p.mu.Lock()
	raw := string(p.raw)
	p.mu.Unlock()
	between := raw[strings.LastIndex(raw[:strings.Index(raw, "FIRST-ANSWER")], "hello")+len("hello") : strings.Index(raw, "FIRST-ANSWER")]
	if strings.Contains(between, ">") {
		t.Fatalf("a prompt was drawn while the model thought: %q", between)
	}
	lines := strings.Split(p.text(), "\n")
	for i, l := range lines {
		if l == "FIRST-ANSWER" && (i == 0 || lines[i-1] != "> hello" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], ">")) {
			t.Fatalf("the reply does not stand between the line sent and the next prompt:\n%s", p.text())
		}
	}
	p.endWith("\x04")
}

// TestChatTerminalApprovalQuestionStays: the approval question is the
// line's prompt, so typing the answer (a redraw) keeps it in view (the
// `> ` prompt was drawn over it).
func TestChatTerminalApprovalQuestionStays(t *testing.T) {
	e := chatEnv(t)
	e.llm.SetHandler(stretchReminderModel)
	p := startPtyChat(t, e)
	p.waitPrompt()
	p.keys("please remind me to stretch in 10 minutes\r")
	p.waitScreen("the question", func(s string) bool { return strings.Contains(s, "Approval needed") })
	// The question is "Approve? [y/N]", or with a standing grant on
	// offer "Approve? [y]es once / [h]our / [a]lways / [N]o".
	p.waitScreen("the question on the cursor's line", func(string) bool {
		l := p.cursorLine()
		return strings.HasPrefix(l, "Approve? [") && strings.HasSuffix(strings.TrimSpace(l), "]") || strings.HasSuffix(strings.TrimSpace(l), "[N]o")
	})
	p.keys("y")
	p.waitScreen("the answer typed after the question", func(string) bool {
		l := p.cursorLine()
		return strings.HasPrefix(l, "Approve? [") && strings.HasSuffix(l, " y")
	})
	p.keys("\r")
	p.waitScreen("the approved reminder", func(s string) bool { return strings.Contains(s, `"success":true`) })
	p.endWith("\x04")
}

// TestChatTerminalModelUnreachable: with the model unreachable and no
// -v, no log line reaches the terminal (WARN and ERROR lines did, three
// per turn); the chat says once, in words, what is wrong, and the log is
// in KAIROS_DATA_DIR/chat.log.
func TestChatTerminalModelUnreachable(t *testing.T) {
	e := chatEnv(t)
	e.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
	p := startPtyChat(t, e)
	for _, msg := range []string{"hello", "anyone there?"} {
		p.waitPrompt()
		p.keys(msg + "\r")
		p.waitScreen("the apology", func(s string) bool {
			return strings.Count(s, "couldn't reach my language model") == map[string]int{"hello": 1, "anyone there?": 2}[msg]
		})
	}
	p.endWith("\x04")
	s := p.text()
	if strings.Contains(s, "level=") {
		t.Fatalf("log lines in the chat:\n%s", s)
	}
	if n := strings.Count(s, "I cannot reach the model endpoint http://127.0.0.1:1/v1"); n != 1 {
		t.Fatalf("the model's trouble was said %d times, want once:\n%s", n, s)
	}
	log, err := os.ReadFile(filepath.Join(e.vars["KAIROS_DATA_DIR"], "chat.log"))
	if err != nil || !strings.Contains(string(log), `msg="model call failed"`) {
		t.Fatalf("chat.log: %v\n%s", err, log)
	}
	if fi, _ := os.Stat(filepath.Join(e.vars["KAIROS_DATA_DIR"], "chat.log")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("chat.log mode %v", fi.Mode().Perm())
	}
}

// TestChatTerminalCtrlCMidTurn: Ctrl-C while the model thinks (no line
// is edited: the terminal is in its normal mode, Ctrl-C is SIGINT) ends
// the chat with exit 0 and leaves nothing of the turn. Only a binary on
// its own controlling terminal gets the signal:
// KAIROS_TEST_CHAT_BINARY=path runs it.
func TestChatTerminalCtrlCMidTurn(t *testing.T) {
	if os.Getenv("KAIROS_TEST_CHAT_BINARY") == "" {
		t.Skip("SIGINT from the terminal needs a binary on its own terminal: set KAIROS_TEST_CHAT_BINARY")
	}
	e := chatEnv(t)
	delete(e.vars, "KAIROS_DATABASE_URL")
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	p := startPtyChat(t, e)
	p.sendHeld(h, "remember the milk")
	p.keys("\x03")
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.text())
	}
	h.let()
	if n := count(t, chatDB(t, e), "messages", ""); n != 0 {
		t.Fatalf("%d messages kept from the interrupted turn", n)
	}
}

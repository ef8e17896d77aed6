package adversarial

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// maxBombRSS bounds the peak resident memory of the whole `kairos run`
// process through the media-bomb section (before the decoding bounds one
// 433 KB PDF alone took 764 MB of heap).
const maxBombRSS = 512 << 20

// TestMediaBombs sends files that are small on the wire and huge once
// decoded: a PDF whose content stream inflates to 200 MB of text, PNGs
// whose headers declare 190 MB (16-bit RGBA) and 186 MB (8-bit) of
// pixels, and eight PDF bombs from eight users at once. What must hold:
// each sender gets one sentence saying the file is too large, the model
// never sees the bomb's text, the process answers a plain message
// afterwards, and its peak resident memory (VmHWM) stays under 512 MB.
func TestMediaBombs(t *testing.T) {
	t.Parallel()
	const crowd = 8
	var users []string
	for i := 0; i < 3+crowd+1; i++ {
		users = append(users, strconv.Itoa(3601+i))
	}
	r := newRig(t, "access:\n  allowed_users: ["+strings.Join(users, ", ")+"]\nmedia:\n  vision: true\n  max_parallel_files: 2\n")
	var mu sync.Mutex
	sawBomb := false
	r.llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, strings.Repeat("A", 200)) {
				mu.Lock()
				sawBomb = true
				mu.Unlock()
			}
		}
		return testkit.TextReply("still here")
	})
	pdfBomb := testkit.PDFInflateBomb(200 << 20)
	png16 := testkit.PNGBomb(5000, 5000, 16)
	png8 := testkit.PNGBomb(7000, 7000, 8)
	r.start()

	var section tally
	refused := func(name string, user int64, want string) {
		got := waitAny(r, user, want, "too large", "too long", "can't")
		section.add(name, strings.Contains(got, want), fmt.Sprintf("reply %q, want %q", got, want))
	}
	now := time.Now()
	r.tg.PushDocument(3601, 3601, r.tg.AddFile("documents", "report.pdf", "application/pdf", pdfBomb), "summarise", now)
	refused("pdf inflate bomb (200 MB of text)", 3601, "too large for me to read")
	r.tg.PushDocument(3602, 3602, r.tg.AddFile("documents", "scan.png", "image/png", png16), "what is this?", now)
	refused("16-bit PNG (190 MB decoded)", 3602, "too large for me to open")
	r.tg.PushPhoto(3603, 3603, r.tg.AddFile("photos", "big.png", "image/png", png8), 7000, 7000, "look", now)
	refused("8-bit PNG (186 MB decoded)", 3603, "too large for me to open")
	for i := int64(0); i < crowd; i++ {
		u := 3604 + i
		r.tg.PushDocument(u, u, r.tg.AddFile("documents", fmt.Sprintf("bomb-%d.pdf", u), "application/pdf", pdfBomb), "read this", now)
	}
	for i := int64(0); i < crowd; i++ {
		refused(fmt.Sprintf("pdf bomb %d of %d at once", i+1, crowd), 3604+i, "too large for me to read")
	}
	last := int64(3604 + crowd)
	r.tg.PushText(last, last, "are you still there?", time.Now())
	r.waitText(last, "still here")
	mu.Lock()
	section.add("model never sees a bomb's text", !sawBomb, "a request held the bomb's text")
	mu.Unlock()
	if hwm, ok := peakRSS(r.proc.Pid); ok {
		t.Logf("peak resident memory of kairos run: %d MB", hwm>>20)
		section.add("peak memory", hwm < maxBombRSS, fmt.Sprintf("VmHWM %d MB, want under %d MB", hwm>>20, maxBombRSS>>20))
	}
	section.report(t, "media bombs")
}

// waitAny waits for a message to chat containing one of words and
// returns its text (the test's deadline is the rig's, 60 s).
func waitAny(r *rig, chat int64, words ...string) string {
	r.t.Helper()
	deadline := testkit.GiveUpAt(r.t)
	for time.Now().Before(deadline) {
		for _, m := range r.tg.SentTo(chat) {
			for _, w := range words {
				if strings.Contains(m.LastText(), w) {
					return m.LastText()
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
	return ""
}

// peakRSS reads a process's peak resident set size (Linux).
func peakRSS(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

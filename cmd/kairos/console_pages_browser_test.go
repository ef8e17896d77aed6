package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// The console as a person sees it: every page opened in headless
// Chromium with fixture data, at a desk's width (1280 px) and a phone's
// (390 px), and checked for what a person would notice. The checks read
// the page through the DevTools protocol (the page itself runs no
// script: its CSP forbids them).

// pageFacts is what a page shows, read from the rendered DOM.
type pageFacts struct {
	Status      int          `json:"-"`
	Text        string       `json:"text"`
	ScrollWidth int          `json:"scrollWidth"`
	InnerWidth  int          `json:"innerWidth"`
	Tables      []tableFacts `json:"tables"`
	Charts      []chartFacts `json:"charts"`
	SVGs        []string     `json:"svgs"`
	Details     []struct {
		Open bool   `json:"open"`
		Text string `json:"text"`
	} `json:"details"`
	Headers []string `json:"headers"`
	Pre     []string `json:"pre"`
	// Content is what people and the model wrote (messages, memories),
	// which the console shows as it is: the checks of its own writing
	// leave it out.
	Content []string `json:"content"`
}

// own is the page's text without what people and the model wrote.
func (f *pageFacts) own() string {
	text := f.Text
	for _, c := range f.Content {
		if c = strings.TrimSpace(c); c != "" {
			text = strings.Replace(text, c, "…", 1)
		}
	}
	return text
}

type tableFacts struct {
	Row    float64 `json:"row"`    // the first row's width
	Box    float64 `json:"box"`    // the content width of the table's container
	Scroll bool    `json:"scroll"` // the table scrolls sideways inside itself
}

type chartFacts struct {
	Src       string `json:"src"`
	TableRows int    `json:"tableRows"`
}

const factsJS = `(() => {
  const main = document.querySelector('main') || document.body;
  const tables = [...main.querySelectorAll('table')].filter(t => t.offsetParent !== null).map(t => {
    const p = t.parentElement, cs = getComputedStyle(p);
    const r = [...t.rows].find(r => r.getBoundingClientRect().height > 0);
    return {row: r ? r.getBoundingClientRect().width : 0,
      box: p.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight),
      scroll: t.scrollWidth > t.clientWidth + 1};
  });
  return {
    text: document.body.innerText,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    tables: tables,
    charts: [...main.querySelectorAll('figure.chart')].map(f => ({src: (f.querySelector('img') || {}).src || '',
      tableRows: f.querySelector('table') ? f.querySelector('table').tBodies[0].rows.length : 0})),
    svgs: [...main.querySelectorAll('svg')].map(s => s.outerHTML),
    details: [...main.querySelectorAll('details')].map(d => ({open: d.open, text: d.innerText})),
    headers: [...main.querySelectorAll('th')].map(th => th.innerText.trim()),
    pre: [...main.querySelectorAll('pre')].map(p => p.innerText),
    content: [...main.querySelectorAll('.content')].map(e => e.innerText),
  };
})()`

// readPage opens a console page and reads its facts.
func readPage(ctx context.Context, u string) (*pageFacts, error) {
	var err error
	for range 3 { // a navigation still under way (a redirect) aborts the next: try again
		var le *chromedp.LoadError
		if err = chromedp.Do(ctx, chromedp.Navigate(u)); !errors.As(err, &le) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](factsJS))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// consolePage is one page of the fixture and what it must show.
type consolePage struct {
	name, path string
	check      func(t *testing.T, width int, f *pageFacts)
}

var (
	isoTime    = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d`)
	longFloat  = regexp.MustCompile(`\b0\.0*[1-9]\d{2,}|\b[1-9][\d,]*\.\d{3,}`) // three significant digits and more after the point
	moneyRe    = regexp.MustCompile(`\$[0-9][0-9,.]*`)
	goodMoney  = regexp.MustCompile(`^\$(\d{1,3}(,\d{3})*\.\d\d|0\.00\d*[1-9]\d?)$`)
	writtenDay = regexp.MustCompile(`(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?, \d\d:\d\d Lisbon`)
	rawTag     = regexp.MustCompile(`</?(b|i|pre|code|a)>|\\u003c|&lt;|&gt;`)
	jsonDump   = regexp.MustCompile(`\{\s*"[a-z_]+":|"[a-z_]+": [\[{"0-9tfn]`)
	bigBare    = regexp.MustCompile(`\b\d{4,}\b tokens`)
	svgText    = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)
)

// commonChecks are the facts every page must show at every width.
func commonChecks(t *testing.T, page string, width int, f *pageFacts) {
	t.Helper()
	if f.ScrollWidth > f.InnerWidth {
		t.Errorf("%s at %d px: the page is %d px wide, wider than the window (%d px)", page, width, f.ScrollWidth, f.InnerWidth)
	}
	for i, tb := range f.Tables {
		if tb.Row+2 < tb.Box {
			t.Errorf("%s at %d px: table %d stops short of its card (%.0f of %.0f px)", page, width, i+1, tb.Row, tb.Box)
		}
		if tb.Scroll {
			t.Errorf("%s at %d px: table %d scrolls sideways inside itself", page, width, i+1)
		}
	}
	text := f.own()
	if m := rawTag.FindString(text); m != "" {
		t.Errorf("%s at %d px: raw tag text %q on the page", page, width, m)
	}
	if m := jsonDump.FindString(text); m != "" {
		t.Errorf("%s at %d px: a JSON dump on the page (%q)", page, width, m)
	}
	if m := isoTime.FindString(text); m != "" {
		t.Errorf("%s at %d px: a machine timestamp %q instead of a written date", page, width, m)
	}
	if m := longFloat.FindString(text); m != "" {
		t.Errorf("%s at %d px: an unrounded number %q", page, width, m)
	}
	for _, m := range moneyRe.FindAllString(text, -1) {
		if m = strings.TrimRight(m, ".,"); !goodMoney.MatchString(m) {
			t.Errorf("%s at %d px: money written as %q (want cents, or two significant digits under a cent)", page, width, m)
		}
	}
	if m := bigBare.FindString(text); m != "" {
		t.Errorf("%s at %d px: a token count without thousands separators: %q", page, width, m)
	}
	for _, s := range f.SVGs {
		if len(svgText.FindAllString(s, -1)) < 5 {
			t.Errorf("%s at %d px: an inline chart with no axes (%d labels): %.200s", page, width, len(svgText.FindAllString(s, -1)), s)
		}
	}
}

// checkCharts asserts each chart has axes and a legend (legend names
// its series) and is also a table.
func checkCharts(t *testing.T, page string, f *pageFacts, legends ...string) {
	t.Helper()
	if len(f.Charts) < len(legends) {
		t.Errorf("%s: %d charts with a table below them, want %d (inline SVGs: %d)", page, len(f.Charts), len(legends), len(f.SVGs))
		return
	}
	for i, legend := range legends {
		c := f.Charts[i]
		svg, err := chartSVG(c.Src)
		if err != nil {
			t.Errorf("%s chart %d: %v", page, i+1, err)
			continue
		}
		var labels []string
		for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
			labels = append(labels, strings.TrimSpace(m[1]))
		}
		ticks := 0
		for _, l := range labels {
			if regexp.MustCompile(`^\$?[0-9][0-9,.]*( ?[a-zµ]+)?$`).MatchString(l) {
				ticks++
			}
		}
		if ticks < 4 || !strings.Contains(strings.Join(labels, "|"), legend) {
			t.Errorf("%s chart %d: %d axis labels (want 4 or more) and legend %q in %q", page, i+1, ticks, legend, labels)
		}
		if c.TableRows < 2 {
			t.Errorf("%s chart %d: its table has %d rows", page, i+1, c.TableRows)
		}
	}
}

// chartSVG decodes a chart image's data URL.
func chartSVG(src string) (string, error) {
	b64, ok := strings.CutPrefix(src, "data:image/svg+xml;base64,")
	if !ok {
		return "", fmt.Errorf("the chart is not an SVG image: %.60q", src)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	return string(b), err
}

// seedConsole writes the fixture the console shows: a reminder and a
// weekly task in two zones, thirty days of spending (small sums under a
// cent, and one above a dollar), and a skill with two versions.
func seedConsole(t *testing.T, e *env, now time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sched := store.NewScheduleStore(db)
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	next := time.Date(now.Year(), now.Month(), now.Day()+3, 9, 0, 0, 0, lisbon)
	for _, s := range []*kairos.Schedule{
		{UserID: approvalChat, ChatID: approvalChat, ThreadKey: "agent:main:telegram:dm:2002", Kind: kairos.ScheduleReminder,
			Text: "Water the <tomatoes> & basil", TZ: "Europe/Lisbon", Start: next.Format("2006-01-02T15:04:05"), NextRun: next},
		{UserID: approvalChat, ChatID: approvalChat, ThreadKey: "agent:main:telegram:dm:2002", Kind: kairos.ScheduleTask,
			Text: "Weekly review", Task: "Summarise my week", TZ: "America/New_York", RRule: "FREQ=WEEKLY;BYDAY=MO",
			Repeat: "every Monday at 8", Start: "2026-01-05T08:00:00", NextRun: next.Add(26 * time.Hour)},
	} {
		s.Ref, s.Status, s.CreatedAt = kairos.NewScheduleRef(), kairos.ScheduleActive, now
		if err := sched.CreateSchedule(ctx, s, 100); err != nil {
			t.Fatal(err)
		}
	}
	sessions := store.NewSessionStore(db)
	for d := range 30 {
		cost := 0.0004569 + float64(d)*0.0001
		if d == 3 {
			cost = 1.2345
		}
		rec := &kairos.UsageRecord{SessionID: "fixture", UserKey: "telegram:2002", Model: "gpt-4o-mini", PromptTokens: 1200 + 40*d,
			CompletionTokens: 345, CreatedAt: now.Add(-time.Duration(d) * 24 * time.Hour), Kind: kairos.SpendChat, CostUSD: cost, Priced: true}
		if err := sessions.RecordUsage(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	mem := &kairos.Memory{ID: kairos.NewID(), UserKey: "telegram:2002", Store: kairos.StoreUserMemory, Type: "preference",
		Content: "Prefers tea to coffee <always>", CreatedAt: now}
	if _, _, err := store.NewMemoryStore(db).StoreMemory(ctx, mem); err != nil {
		t.Fatal(err)
	}
	skills := store.NewSkillStore(db)
	sk := &kairos.Skill{Name: "tip_split", Owner: "telegram:2002", Scope: kairos.SkillScopeUser, Enabled: true}
	v := &kairos.SkillVersion{Description: "Splits a bill & tip between <n> people", Code: "function run(input) {\n  return {each: input.total / input.people};\n}",
		InputSchema: []byte(`{"type":"object"}`), CreatedBy: "telegram:2002", ApprovedBy: "telegram:1001", CreatedAt: now}
	if err := skills.CreateSkill(ctx, sk, v); err != nil {
		t.Fatal(err)
	}
	answer := `{"success":true,"answer":"Lisbon's tram 28 runs every 10 <minutes>.","abstained":false,"confidence":"high",` +
		`"confidence_reason":"two offline references agree","sources":[{"id":1},{"id":2}],"tiers_used":["memory","offline"]}`
	if err := store.NewResearchStore(db).CreateTrace(ctx, &kairos.ResearchTrace{ID: kairos.NewID(), UserKey: "telegram:2002",
		ThreadKey: "agent:main:telegram:dm:2002", Question: "How often does tram 28 run?", QuestionKey: "tram 28", Depth: "normal",
		Status: "done", Tainted: true, Answer: []byte(answer), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// consoleFixture starts kairos run over the fixture, with named users
// who talk to it, a decided and a pending approval, an operator in
// Lisbon and a few API requests; it returns the base URL and a sign-in
// link.
func consoleFixture(t *testing.T) (*env, string, string) {
	e := skillEnv(t, "")
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  operators: [1001]\n  allowed_users: [2002, 2003]\n"), 0o600)
	makeSkill := skillModel(createCall("double", skillCode, `{"doubled":4}`), "")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if strings.HasPrefix(r.LastUserMessage(), "make") {
			return makeSkill(r)
		}
		return approvalModel(r)
	})
	now := time.Now()
	seedConsole(t, e, now)
	write := e.apiToken(t, "write", "home-assistant")
	addr := e.startWithCells()
	base := "http://" + addr

	// Bruno builds a skill: its approval shows the code (the details).
	e.tg.PushText(2003, 2003, "make a doubling skill", time.Now(), testkit.From("Bruno", "bruno_b"))
	approve(t, e, 2003, 1, "input.n * 2")
	waitReply(t, e.tg, 2003, 2, `"version":1`)

	ana := testkit.From("Ana", "ana_l")
	e.tg.PushText(operatorID, operatorID, "/clock tz Europe/Lisbon", time.Now(), testkit.From("Olga", "olga_ops"))
	waitReply(t, e.tg, operatorID, 1, "Lisbon")
	e.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now(), ana)
	waitReply(t, e.tg, approvalChat, 1, "Done")
	e.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now(), ana)
	waitReply(t, e.tg, approvalChat, 2, "Approval needed")
	var pending map[string]any
	waitFor(t, "the approval in the API", func() bool {
		_, pending = apiCall(t, "GET", base+"/api/v1/approvals?status=pending", write, "", nil)
		items, _ := pending["items"].([]any)
		return len(items) == 1
	})
	id := pending["items"].([]any)[0].(map[string]any)["id"].(string)
	if code, body := apiCall(t, "POST", base+"/api/v1/approvals/"+id+"/decision", write, "application/json", []byte(`{"approve": true}`)); code != 200 {
		t.Fatalf("decide: %d %v", code, body)
	}
	waitReply(t, e.tg, approvalChat, 3, "Forget outcome")
	e.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now(), ana)
	waitReply(t, e.tg, approvalChat, 4, "Approval needed")
	apiCall(t, "GET", base+"/api/v1/users", "kat_not-a-token", "", nil)
	link := consoleLink(t, e, 2)
	e.tg.PushText(operatorID, operatorID, "/help", time.Now(), testkit.From("Olga", "olga_ops")) // the link's message came from "User1001"
	waitReply(t, e.tg, operatorID, 3, "")
	return e, base, link
}

// consolePages lists every page with the facts it must show besides the
// common ones.
func consolePages(e *env) []consolePage {
	has := func(page string, want ...string) func(t *testing.T, width int, f *pageFacts) {
		return func(t *testing.T, width int, f *pageFacts) {
			for _, w := range want {
				if !strings.Contains(f.Text, w) {
					t.Errorf("%s at %d px: the page never says %q", page, width, w)
				}
			}
		}
	}
	return []consolePage{
		{"overview", "/console/", func(t *testing.T, width int, f *pageFacts) {
			checkCharts(t, "overview", f, "turns", "ms")
			if !regexp.MustCompile(`\d,\d{3} tokens`).MatchString(f.Text) {
				t.Errorf("overview at %d px: today's tokens without thousands separators: %q", width, f.Text)
			}
		}},
		{"users", "/console/users", has("users", "Ana", "@ana_l", "Olga")},
		{"threads", "/console/threads?user=telegram:2002", has("threads", "Ana")},
		{"thread", "/console/thread?key=" + url.QueryEscape("agent:main:telegram:dm:2002"), has("thread", "remember that I live in Lisbon")},
		{"memories", "/console/memories", has("memories", "Prefers tea to coffee <always>", "Ana")},
		{"schedules", "/console/schedules", func(t *testing.T, width int, f *pageFacts) {
			has("schedules", "Water the <tomatoes> & basil", "Ana", "every Monday at 8")(t, width, f)
			if !writtenDay.MatchString(f.Text) {
				t.Errorf("schedules at %d px: no time written out in the operator's zone (like \"Sat 29 Nov, 09:00 Lisbon\"):\n%s", width, f.Text)
			}
		}},
		{"approvals", "/console/approvals", func(t *testing.T, width int, f *pageFacts) {
			has("approvals", "Approval needed", "Ana", "memory.forget")(t, width, f)
			if n := strings.Count(f.Text, "Expires in"); n > 1 {
				t.Errorf("approvals at %d px: %d \"Expires in\" for one pending request (decided ones say it too)", width, n)
			}
			if len(f.Details) == 0 {
				t.Errorf("approvals at %d px: the requests' details are not collapsed in <details>", width)
			}
			for _, d := range f.Details {
				if d.Open {
					t.Errorf("approvals at %d px: details shown open: %q", width, d.Text)
				}
			}
		}},
		{"skills", "/console/skills", has("skills", "tip_split", "Splits a bill & tip between <n> people", "Ana")},
		{"skill", "/console/skill?id=1", has("skill", "tip_split", "Splits a bill & tip between <n> people", "Ana")},
		{"tools", "/console/tools", func(t *testing.T, width int, f *pageFacts) {
			got := strings.Join(f.Headers, "|")
			for _, h := range []string{"Name", "Server", "Read or write", "Enabled", "Description"} {
				if !strings.Contains(got, h) {
					t.Errorf("tools at %d px: no %q column (headers %q)", width, h, got)
				}
			}
			has("tools", "memory", "built-in")(t, width, f)
		}},
		{"usage", "/console/usage", func(t *testing.T, width int, f *pageFacts) {
			checkCharts(t, "usage", f, "cost")
			has("usage", "$1.29", "Ana") // 1.2345 + Σ(0.0004569 + 0.0001·d) over the 29 other days(t, width, f)
			if strings.Contains(f.Text, "peak") {
				t.Errorf("usage at %d px: the chart is labelled with a bare peak", width)
			}
		}},
		{"policy", "/console/policy", func(t *testing.T, width int, f *pageFacts) {
			has("policy", "In force", "ambiguity_threshold_hours")(t, width, f)
		}},
		{"access", "/console/access", has("access", "token:home-assistant", "/api/v1/approvals", "401", "Olga")},
		{"research", "/console/research", has("research", "How often does tram 28 run?", "high confidence", "2 source(s): memory, offline",
			"untrusted", "Ana")},
	}
}

// TestConsolePagesInBrowser opens every page of the console in Chromium
// at 1280 and 390 px and checks what a person would notice; with
// KAIROS_SCREENSHOTS=1 it refreshes doc/console's pictures.
func TestConsolePagesInBrowser(t *testing.T) {
	chromium(t)
	e, base, link := consoleFixture(t)
	ctx := browser(t, 1280, 900)
	dir := shotDir(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.CSS(".tiles"))); err != nil {
		t.Fatalf("sign in: %v\n%s", err, e.logs.String())
	}
	for _, width := range []int{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 900)); err != nil {
			t.Fatal(err)
		}
		for _, p := range consolePages(e) {
			f, err := readPage(ctx, base+p.path)
			if err != nil {
				t.Fatalf("%s at %d px: %v", p.name, width, err)
			}
			commonChecks(t, p.name, width, f)
			p.check(t, width, f)
			name := p.name
			if width != 1280 {
				name = "phone-" + p.name
			}
			if width == 1280 || p.name == "overview" || p.name == "approvals" {
				if err := chromedp.Do(ctx, shot(dir, name)); err != nil {
					t.Fatalf("screenshot %s: %v", name, err)
				}
			}
		}
	}
	if os.Getenv("KAIROS_SCREENSHOTS") == "1" {
		t.Logf("screenshots written to %s", dir)
	}
}

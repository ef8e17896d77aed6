package research

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The fixture world: what the user remembers, what the operator's folder
// and ZIM archive hold, what the web serves, and what the external model
// knows. Everything is generated from one seed; names are invented, so
// no real model can know the answers.

type memoryFact struct {
	Content string
	At      time.Time
}

type document struct {
	Path    string // relative, with its extension: .md .html .txt .pdf
	Title   string
	Text    string // the sentences; rendered per format by the writer
	ModTime time.Time
}

type webPage struct {
	Host, Path string
	Title      string
	Body       string // HTML body
	Date       string // meta date, "" for none
	Keys       []string
}

type question struct {
	Q        string
	Tier     string   // the lowest tier that answers it; "" when nothing does
	Kind     string   // single, cross, unanswerable, stale
	Want     []string // every string the answer must hold (commas and case ignored)
	Zim      bool     // answered only by the ZIM archive
	Injected bool     // its sources hold an injection
}

type world struct {
	memories  []memoryFact
	docs      []document
	zim       []document // articles of the ZIM archive (HTML bodies in Text)
	pages     []webPage
	knowledge map[string]string
	questions []question
	used      map[string]bool
	rng       *rand.Rand
	now       time.Time
}

var (
	syllA = []string{"Kes", "Var", "Orr", "Tal", "Mer", "Hal", "Sel", "Bryn", "Cor", "Dun", "Eld", "Fen", "Gal", "Hep", "Ist",
		"Jor", "Kal", "Lun", "Mor", "Nes", "Pell", "Quen", "Ros", "Sten", "Thor", "Ulm", "Vey", "Wil", "Yar", "Zel"}
	syllB = []string{"trel", "ne", "in", "low", "wick", "ford", "dale", "mere", "ton", "by", "ham", "well", "more", "stead", "gate", "holm"}
	zones = []string{"Europe/Berlin", "Europe/Lisbon", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "Europe/Zurich", "America/Chicago"}
)

// name invents a name not used before.
func (w *world) name() string {
	for {
		n := syllA[w.rng.IntN(len(syllA))] + syllB[w.rng.IntN(len(syllB))]
		if !w.used[n] {
			w.used[n] = true
			return n
		}
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func newWorld() *world {
	w := &world{used: map[string]bool{}, rng: rand.New(rand.NewPCG(34, 2026)), knowledge: map[string]string{},
		now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	// Reserved: the names of the unanswerable questions never exist.
	for _, n := range unknownNames {
		w.used[n] = true
	}
	w.memoryQuestions()
	w.offlineQuestions()
	w.zimQuestions()
	w.webQuestions()
	w.modelQuestions()
	w.crossQuestions()
	w.unanswerable()
	w.staleQuestions()
	w.collisions()
	w.distractors()
	return w
}

var events = []string{"dentist appointment", "flight to Lisbon", "piano recital", "car inspection", "tax filing deadline",
	"team offsite", "anniversary dinner", "library book return", "vet appointment for Milo", "passport interview", "eye exam",
	"haircut", "boiler service", "quarterly review", "marathon registration deadline", "sister's wedding", "guitar lesson",
	"parents' evening", "moving day", "visa appointment", "lease renewal", "insurance renewal", "conference talk",
	"orthodontist visit", "bike repair pickup", "photo shoot", "board game night", "pottery class"}

func (w *world) memoryQuestions() {
	for i, ev := range events {
		at := w.now.AddDate(0, 0, 3+i*4)
		date := at.Format("2006-01-02")
		hm := fmt.Sprintf("%02d:%02d", 8+w.rng.IntN(11), 15*w.rng.IntN(4))
		w.memories = append(w.memories, memoryFact{Content: fmt.Sprintf("My %s is on %s at %s (%s).", ev, date, hm, zones[i%len(zones)]),
			At: w.now.AddDate(0, 0, -1-i)})
		w.questions = append(w.questions, question{Q: "When is my " + ev + "?", Tier: "memory", Kind: "single", Want: []string{date}})
	}
}

// entity kinds of the offline folder: a sentence with the answer, a
// question, and how the answer is written.
type entityKind struct {
	fact     func(n string, v int) string
	ask      func(n string) string
	value    func(r *rand.Rand) int
	want     func(v int) string
	titleFor func(n string) string
}

var kinds = []entityKind{
	{func(n string, v int) string {
		return fmt.Sprintf("The %s River is %d kilometres long and rises in the hills.", n, v)
	},
		func(n string) string { return "How long is the " + n + " River?" }, func(r *rand.Rand) int { return 40 + r.IntN(900) },
		func(v int) string { return fmt.Sprint(v) }, func(n string) string { return n + " River" }},
	{func(n string, v int) string {
		return fmt.Sprintf("Mount %s stands %s metres high above its valley.", n, thousands(v))
	},
		func(n string) string { return "How high is Mount " + n + "?" }, func(r *rand.Rand) int { return 1200 + r.IntN(3500) },
		thousands, func(n string) string { return "Mount " + n }},
	{func(n string, v int) string {
		return fmt.Sprintf("%s had a population of %s at the 2025 census.", n, thousands(v))
	},
		func(n string) string { return "What is the population of " + n + "?" }, func(r *rand.Rand) int { return 2000 + r.IntN(90000) },
		thousands, func(n string) string { return n }},
	{func(n string, v int) string {
		return fmt.Sprintf("The %s Bridge opened in %d after years of work.", n, v)
	},
		func(n string) string { return "When did the " + n + " Bridge open?" }, func(r *rand.Rand) int { return 1850 + r.IntN(170) },
		func(v int) string { return fmt.Sprint(v) }, func(n string) string { return n + " Bridge" }},
	{func(n string, v int) string {
		return fmt.Sprintf("The %s Observatory was founded in %d by a local society.", n, v)
	},
		func(n string) string { return "When was the " + n + " Observatory founded?" }, func(r *rand.Rand) int { return 1700 + r.IntN(300) },
		func(v int) string { return fmt.Sprint(v) }, func(n string) string { return n + " Observatory" }},
}

var fillers = []string{"It is known for its quiet paths and old stone walls.", "Visitors often remark on the light in the evening.",
	"Local guides describe it in detail.", "The area around it is popular with walkers.", "Records about it are kept in the archive."}

// entityDoc writes one offline document about a new entity of kind k and
// returns its name and the answer.
func (w *world) entityDoc(k int, mod time.Time) (string, int) {
	n := w.name()
	kd := kinds[k]
	v := kd.value(w.rng)
	text := kd.fact(n, v) + " " + fillers[w.rng.IntN(len(fillers))] + "\n" + fillers[w.rng.IntN(len(fillers))]
	exts := []string{".md", ".md", ".md", ".md", ".html", ".html", ".html", ".txt", ".txt", ".pdf"}
	ext := exts[len(w.docs)%len(exts)]
	w.docs = append(w.docs, document{Path: fmt.Sprintf("%s/%s%s", []string{"rivers", "mountains", "towns", "bridges", "observatories"}[k],
		strings.ToLower(n), ext), Title: kd.titleFor(n), Text: text, ModTime: mod})
	return n, v
}

func (w *world) offlineQuestions() {
	for i := 0; i < 24; i++ {
		k := i % len(kinds)
		n, v := w.entityDoc(k, w.now.AddDate(0, -1-i%6, 0))
		w.questions = append(w.questions, question{Q: kinds[k].ask(n), Tier: "offline", Kind: "single", Want: []string{kinds[k].want(v)}})
	}
}

// distractors fill the folder to about 200 documents about other
// entities of the same kinds, and add memories that do not answer.
func (w *world) distractors() {
	for len(w.docs) < 200 {
		w.entityDoc(len(w.docs)%len(kinds), w.now.AddDate(-1, 0, 0))
	}
	for _, m := range []string{"I like my dentist, Dr. Alvarez, in Kreuzberg.", "I prefer window seats on flights.",
		"Milo is my cat; he is seven.", "I keep my passport in the blue folder.", "My guitar teacher is called Ruth."} {
		w.memories = append(w.memories, memoryFact{Content: m, At: w.now.AddDate(0, -2, 0)})
	}
}

func (w *world) zimQuestions() {
	for i := 0; i < 8; i++ {
		n := w.name()
		y := 1800 + w.rng.IntN(200)
		h := 20 + w.rng.IntN(60)
		body := fmt.Sprintf("<h1>%s Lighthouse</h1><p>The %s Lighthouse is %d metres tall and was first lit in %d.</p><p>%s</p>",
			n, n, h, y, fillers[i%len(fillers)])
		w.zim = append(w.zim, document{Path: n + "_Lighthouse.html", Title: n + " Lighthouse", Text: body})
		w.questions = append(w.questions, question{Q: "When was the " + n + " Lighthouse first lit?", Tier: "offline", Kind: "single",
			Want: []string{fmt.Sprint(y)}, Zim: true})
	}
}

package research

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Tool is the `research` tool over an Engine.
type Tool struct{ e *Engine }

var _ kairos.Tool = (*Tool)(nil)

// Tool returns the engine's model-facing tool.
func (e *Engine) Tool() *Tool { return &Tool{e: e} }

var spec = kairos.ToolSpec{
	Name: "research",
	Description: "A cited answer from checked sources: memory, then offline references, then the allowed web, as far as needed; " +
		"abstained: true if nothing checked answers.",
	Parameters: toolutil.Schema(`{
		"type": "object",
		"properties": {
			"question": {"type": "string"},
			"depth": {"type": "string", "enum": ["quick", "normal", "deep"]}
		},
		"required": ["question"],
		"additionalProperties": false
	}`),
}

// Spec implements kairos.Tool.
func (t *Tool) Spec() kairos.ToolSpec { return spec }

// cues are the words that offer research to a turn (tools.Offered);
// without them it is reachable with more_tools.
var cues = []string{"research", "source", "cite", "citation", "evidence", "verif", "fact", "paper", "stud", "reference", "proof"}

// CuedBy implements tools.Offered's on-demand offer.
func (t *Tool) CuedBy(m tools.Message) bool { return tools.HasCue(m.Words, cues) }

type args struct {
	Question string `json:"question"`
	Depth    string `json:"depth"`
}

func parseArgs(raw json.RawMessage) (args, error) {
	var a args
	if err := toolutil.DecodeArgs(raw, &a); err != nil {
		return a, err
	}
	if strings.TrimSpace(a.Question) == "" {
		return a, kairos.Errorf(kairos.EINVALID, "argument \"question\" is required")
	}
	if a.Depth != "" {
		if err := toolutil.OneOf("depth", a.Depth, kairos.DepthQuick, kairos.DepthNormal, kairos.DepthDeep); err != nil {
			return a, err
		}
	}
	return a, nil
}

// Action implements kairos.Tool: research only reads, so it is never
// impactful (approvals.required may still name it).
func (t *Tool) Action(_ context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	if _, err := parseArgs(inv.Arguments); err != nil {
		return kairos.ToolAction{}, err
	}
	return kairos.ToolAction{Name: kairos.ActionResearch, Capability: kairos.CapResearch}, nil
}

// Call implements kairos.Tool. The result is tainted when any source
// read was (anything but the user's own untainted memories).
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	a, err := parseArgs(inv.Arguments)
	if err != nil {
		return nil, err
	}
	req := Request{UserKey: inv.UserKey, ThreadKey: inv.ThreadKey, Question: a.Question, Depth: a.Depth}
	if !inv.Tainted {
		req.UserURLs = URLsIn(inv.TriggerMessage)
	}
	res, err := t.e.Research(ctx, req)
	if err != nil {
		return nil, err
	}
	return toolutil.Result(res, res.Untrusted)
}

var urlRe = regexp.MustCompile(`https?://[^\s<>"'\x60]+`)

// URLsIn returns the web addresses written in a text (its own words: the
// web tier may read them when their domain is allowed).
func URLsIn(text string) []string {
	var out []string
	for _, u := range urlRe.FindAllString(text, 20) {
		out = append(out, strings.TrimRight(u, ".,;:!?)]}"))
	}
	return out
}

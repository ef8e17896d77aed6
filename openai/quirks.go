package openai

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kairos-agent/kairos"
)

// --- parameters a model refuses ---------------------------------------------

// modelQuirks is what the client learned about one model from its
// refusals; it lasts as long as the process.
type modelQuirks struct {
	maxCompletion   int8 // 1: send max_completion_tokens, -1: send max_tokens, 0: by name
	noStreamOptions bool // the server refuses stream_options
	// thinking is where the model's thoughts begin, as its answers showed
	// (kairos.ThinkingTemplate or ThinkingTagged; "" not yet known).
	thinking string
}

type quirkMemory struct {
	mu sync.Mutex
	m  map[string]modelQuirks
}

func (q *quirkMemory) get(model string) modelQuirks {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.m[model]
}

func (q *quirkMemory) update(model string, f func(*modelQuirks)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[string]modelQuirks{}
	}
	mq := q.m[model]
	f(&mq)
	q.m[model] = mq
}

// learn records a refused parameter and reports whether the request is
// worth sending again without it.
func (q *quirkMemory) learn(model, param string) bool {
	switch param {
	case "max_tokens":
		q.update(model, func(m *modelQuirks) { m.maxCompletion = 1 })
	case "max_completion_tokens":
		q.update(model, func(m *modelQuirks) { m.maxCompletion = -1 })
	case "stream_options", "stream_options.include_usage":
		q.update(model, func(m *modelQuirks) { m.noStreamOptions = true })
	default:
		return false
	}
	return true
}

var (
	unsupportedRes = []*regexp.Regexp{
		regexp.MustCompile(`(?i)unsupported parameter:?\s*'([a-z_.]+)'`),
		regexp.MustCompile(`(?i)unrecognized request arguments? supplied:?\s*([a-z_.]+)`),
		regexp.MustCompile(`(?i)'([a-z_.]+)' is not supported with this model`),
		regexp.MustCompile(`(?i)'loc': \('body', '([a-z_]+)'\)[^}]*extra inputs are not permitted`),
		regexp.MustCompile(`(?i)"loc":\s*\["body",\s*"([a-z_]+)"\][^}]*extra inputs are not permitted`),
		regexp.MustCompile(`(?i)unknown (?:parameter|field|argument):?\s*'?"?([a-z_.]+)`),
		// Google's APIs (Gemini's OpenAI endpoint): Unknown name "x": Cannot find field.
		regexp.MustCompile(`(?i)unknown name \\?"([a-z_.]+)\\?"`),
	}
	noToolsRe  = regexp.MustCompile(`(?i)(does not support tools|tools? (?:are|is) not supported|tool calling is not supported|tool use is not supported|requires --jinja|enable-auto-tool-choice|does not support function calling)`)
	contextRe  = regexp.MustCompile(`(?i)(maximum context length|context length|context window|context_length_exceeded|exceeds the available context size|too many tokens|prompt is too long|reduce the length)`)
	windowRes  = []*regexp.Regexp{regexp.MustCompile(`(?i)maximum context length is (\d+)`), regexp.MustCompile(`(?i)context (?:size|window|length) (?:is |of )?\(?(\d{3,})`), regexp.MustCompile(`"n_ctx":\s*(\d+)`)}
	toolParams = []string{"tools", "tool_choice", "parallel_tool_calls"}
)

// refusal extracts the status, the param the server named and the text
// of a 4xx answer from go-openai's error, or ok=false.
func refusal(err error) (status int, param, text string, ok bool) {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status, text = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Param != nil {
			param = *apiErr.Param
		}
		if code, ok := apiErr.Code.(string); ok {
			text += " " + code
		}
	case errors.As(err, &reqErr):
		status, text = reqErr.HTTPStatusCode, string(reqErr.Body)
	default:
		return 0, "", "", false
	}
	return status, param, text, status >= 400 && status < 500
}

// unsupportedParam names the request parameter a 400 refused, or "".
func unsupportedParam(err error) string {
	status, param, text, ok := refusal(err)
	if !ok || status != 400 {
		return ""
	}
	for _, re := range unsupportedRes {
		if m := re.FindStringSubmatch(text); m != nil {
			return strings.TrimSuffix(m[1], ".")
		}
	}
	low := strings.ToLower(text)
	if param != "" && (strings.Contains(low, "unsupported") || strings.Contains(low, "not supported")) {
		return param
	}
	return ""
}

// refine sets pe.Kind (and the window a context error names) from the
// refusal behind err.
func refine(pe *kairos.ProviderError, err error, body []byte) {
	status, param, text, ok := refusal(err)
	if !ok {
		return
	}
	text += " " + string(body)
	p := unsupportedParam(err)
	switch {
	case contains(toolParams, p) || contains(toolParams, param) && noToolsRe.MatchString(text) || noToolsRe.MatchString(text):
		pe.Kind = kairos.ProviderNoTools
	case status == 400 || status == 413:
		if contextRe.MatchString(text) {
			pe.Kind = kairos.ProviderContextLength
			for _, re := range windowRes {
				if m := re.FindStringSubmatch(text); m != nil {
					pe.ContextWindow, _ = strconv.Atoi(m[1])
					break
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s && s != "" {
			return true
		}
	}
	return false
}

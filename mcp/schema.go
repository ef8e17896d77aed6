package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kairos-agent/kairos"
)

// Limits on what a server may put in the model's prompt.
const (
	maxToolDescription  = 600  // bytes of a tool's description
	maxParamDescription = 200  // bytes of one parameter's description
	maxSchemaBytes      = 4096 // of a trimmed parameters schema
	maxSchemaDepth      = 6
	maxModelToolName    = 64
)

// modelToolName is what chat-completions APIs accept as a function name.
var modelToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// dataValue cleans a string value of a schema (an enum entry, const,
// default, pattern, format) as asData does when it holds a control or
// invisible character or is longer than a parameter's description; other
// values, and ordinary strings (a pattern's spaces matter), are kept.
func dataValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	if len(s) > maxParamDescription || strings.IndexFunc(s, invisible) >= 0 {
		return asData(s, maxParamDescription)
	}
	return s
}

// keptKeywords are the JSON Schema keywords the model is shown; the rest
// ($schema, $id, examples, titles, vendor extensions, …) cost tokens and
// some providers refuse them.
var keptKeywords = map[string]bool{
	"type": true, "description": true, "properties": true, "required": true, "items": true,
	"enum": true, "const": true, "default": true, "format": true, "pattern": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"additionalProperties": true, "anyOf": true, "oneOf": true, "allOf": true, "nullable": true,
}

// modelSpec prepares a listed tool for the model: its namespaced name,
// clipped description and trimmed schema. A non-empty why says why the
// tool cannot be offered.
func modelSpec(server string, t *sdk.Tool) (kairos.ToolSpec, string) {
	name := kairos.MCPToolName(server, t.Name)
	if !modelToolName.MatchString(t.Name) || len(name) > maxModelToolName {
		return kairos.ToolSpec{}, fmt.Sprintf("its name %q is not letters, digits, _ and - or makes %s longer than %d characters", kairos.Clip(t.Name, 80), kairos.Clip(name, 80), maxModelToolName)
	}
	params, err := trimSchema(t.InputSchema)
	if err != nil {
		return kairos.ToolSpec{}, "its input schema " + err.Error()
	}
	desc := asData(t.Description, maxToolDescription)
	if desc == "" {
		desc = asData(t.Title, maxToolDescription)
	}
	desc = fmt.Sprintf("[MCP server %s] %s", server, desc)
	// The server wrote the description: the agent fences it as data.
	return kairos.ToolSpec{Name: name, Description: strings.TrimSpace(desc), Parameters: params, Untrusted: "MCP server " + server}, ""
}

// trimSchema validates an input schema (an object schema) and keeps what
// the model needs.
func trimSchema(in any) (json.RawMessage, error) {
	var root map[string]any
	switch v := in.(type) {
	case nil:
		root = map[string]any{}
	case map[string]any:
		root = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("is not JSON")
		}
		if err := json.Unmarshal(b, &root); err != nil {
			return nil, fmt.Errorf("is not a JSON object")
		}
	}
	if t, ok := root["type"]; ok && t != "object" {
		return nil, fmt.Errorf("has type %v, not object", t)
	}
	out, err := trimNode(root, 0)
	if err != nil {
		return nil, err
	}
	out["type"] = "object"
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("cannot be encoded: %v", err)
	}
	if len(b) > maxSchemaBytes {
		return nil, fmt.Errorf("is %d bytes once trimmed, more than %d", len(b), maxSchemaBytes)
	}
	return b, nil
}

func trimNode(n map[string]any, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("is nested deeper than %d levels", maxSchemaDepth)
	}
	out := map[string]any{}
	for k, v := range n {
		if !keptKeywords[k] {
			continue // $ref without its $defs included: the model sees "any"
		}
		tv, keep, err := trimKeyword(k, v, depth)
		if err != nil {
			return nil, err
		}
		if keep {
			out[k] = tv
		}
	}
	return out, nil
}

// trimKeyword is trimNode's step for one kept keyword k of a node at
// depth: its trimmed value, whether to keep it (an empty description is
// dropped), or why the schema is refused.
func trimKeyword(k string, v any, depth int) (any, bool, error) {
	switch k {
	case "description":
		s, ok := v.(string)
		if !ok {
			return nil, false, fmt.Errorf("has a description that is not a string")
		}
		s = asData(s, maxParamDescription)
		return s, s != "", nil
	case "properties":
		tp, err := trimProperties(v, depth)
		return tp, err == nil, err
	case "items", "additionalProperties":
		switch iv := v.(type) {
		case bool:
			return iv, true, nil
		case map[string]any:
			sub, err := trimNode(iv, depth+1)
			return sub, err == nil, err
		}
		return nil, false, fmt.Errorf("has %s that is not a schema", k)
	case "anyOf", "oneOf", "allOf":
		subs, err := trimSubschemas(k, v, depth)
		return subs, err == nil, err
	case "required":
		list, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Errorf("has required that is not a list")
		}
		for _, r := range list {
			if _, ok := r.(string); !ok {
				return nil, false, fmt.Errorf("has required with an entry that is not a name")
			}
		}
		return list, true, nil
	case "enum":
		list, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Errorf("has enum that is not a list")
		}
		vals := make([]any, len(list))
		for i, e := range list {
			vals[i] = dataValue(e)
		}
		return vals, true, nil
	}
	return dataValue(v), true, nil
}

// trimProperties trims each property's schema; `true` stands for any
// value, and a property name that hides characters refuses the schema.
func trimProperties(v any, depth int) (map[string]any, error) {
	props, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("has properties that are not an object")
	}
	tp := map[string]any{}
	for name, pv := range props {
		if hidden(name) {
			return nil, fmt.Errorf("has a property name with spaces, control or invisible characters")
		}
		pm, ok := pv.(map[string]any)
		if !ok {
			if b, isBool := pv.(bool); isBool && b {
				tp[name] = map[string]any{}
				continue
			}
			return nil, fmt.Errorf("has property %q that is not a schema", kairos.Clip(name, 40))
		}
		sub, err := trimNode(pm, depth+1)
		if err != nil {
			return nil, err
		}
		tp[name] = sub
	}
	return tp, nil
}

// trimSubschemas trims the entries of an anyOf, oneOf or allOf (k).
func trimSubschemas(k string, v any, depth int) ([]any, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("has %s that is not a list", k)
	}
	var subs []any
	for _, item := range list {
		im, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("has %s with an entry that is not a schema", k)
		}
		sub, err := trimNode(im, depth+1)
		if err != nil {
			return nil, err
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

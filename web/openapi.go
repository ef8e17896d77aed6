package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func props(required []string, p obj) obj {
	o := obj{"type": "object", "properties": p}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func str() obj              { return obj{"type": "string"} }
func strFmt(f string) obj   { return obj{"type": "string", "format": f} }
func integer() obj          { return obj{"type": "integer"} }
func boolean() obj          { return obj{"type": "boolean"} }
func arrayOf(items obj) obj { return obj{"type": "array", "items": items} }
func pageOf(item string) obj {
	return props([]string{"items"}, obj{"items": arrayOf(ref(item)), "next_cursor": str()})
}

// schemas are the bodies the routes name.
var schemas = obj{
	"Error":   props([]string{"error"}, obj{"error": props([]string{"code", "message"}, obj{"code": str(), "message": str()})}),
	"OpenAPI": obj{"type": "object"},
	"User": props([]string{"key"}, obj{"key": str(), "first_name": str(), "username": str(), "default_tz": str(),
		"last_interaction": strFmt("date-time")}),
	"UserPage": pageOf("User"),
	"Thread": props([]string{"key"}, obj{"key": str(), "kind": str(), "session_tz": str(), "last_interaction": strFmt("date-time"),
		"last_user_message": strFmt("date-time"), "last_agent_message": strFmt("date-time")}),
	"ThreadPage": pageOf("Thread"),
	"Message": props([]string{"id", "role", "content", "created_at"}, obj{"id": integer(), "session_id": str(), "role": str(),
		"content": str(), "tainted": boolean(), "created_at": strFmt("date-time")}),
	"MessagePage": pageOf("Message"),
	"Memory": props([]string{"id", "user", "store", "type", "content", "created_at"}, obj{"id": str(), "user": str(), "store": str(),
		"type": str(), "content": str(), "tags": arrayOf(str()), "period_key": str(), "tainted": boolean(), "created_at": strFmt("date-time")}),
	"MemoryPage": pageOf("Memory"),
	"Done":       props([]string{"ok"}, obj{"ok": boolean()}),
	"Schedule": props([]string{"id", "kind", "next_run", "text"}, obj{"id": obj{}, "user_id": integer(), "thread_key": str(),
		"kind": obj{"type": "string", "enum": []string{"reminder", "task", "cell"}}, "next_run": strFmt("date-time"), "tz": str(),
		"repeat": str(), "text": str()}),
	"SchedulePage": pageOf("Schedule"),
	"Approval": props([]string{"id", "action", "status", "created_at"}, obj{"id": str(), "user_id": integer(), "thread": str(),
		"action": str(), "text": str(), "status": obj{"type": "string", "enum": []string{"pending", "approved", "denied", "expired"}},
		"decided_by": str(), "created_at": strFmt("date-time"), "expires_at": strFmt("date-time")}),
	"ApprovalPage":   pageOf("Approval"),
	"Decision":       props([]string{"approve"}, obj{"approve": boolean()}),
	"DecisionResult": props([]string{"result"}, obj{"result": str()}),
	"Usage": props([]string{"rows"}, obj{"rows": arrayOf(props([]string{"user_key", "model", "day", "tokens", "cost_usd"}, obj{
		"user_key": str(), "user_id": integer(), "model": str(), "day": strFmt("date"), "calls": integer(), "prompt_tokens": integer(),
		"cached_tokens": integer(), "completion_tokens": integer(), "audio_seconds": obj{"type": "number"}, "images": integer(),
		"tokens": integer(), "cost_usd": obj{"type": []string{"number", "null"}, "description": "null when no call had a price"},
		"unpriced_calls": integer(), "estimated_calls": integer()}))}),
	"SkillRow": props([]string{"id", "name", "version", "owner", "scope", "enabled"}, obj{"id": integer(), "name": str(), "version": integer(),
		"owner": str(), "scope": str(), "enabled": boolean(), "created_at": strFmt("date-time"), "tainted": boolean(), "runs": integer(),
		"run_failures": integer(), "description": str(), "disabled_reason": str()}),
	"Skills": props([]string{"items"}, obj{"items": arrayOf(ref("SkillRow"))}),
	"Skill": props([]string{"skill", "versions"}, obj{"skill": ref("SkillRow"), "versions": arrayOf(props([]string{"version", "code"},
		obj{"version": integer(), "description": str(), "code": str(), "diff": str(), "created_by": str(), "approved_by": str(),
			"created_at": strFmt("date-time")}))}),
	"SkillAction": props([]string{"action"}, obj{"action": obj{"type": "string", "enum": []string{"disable", "enable", "share", "unshare", "rollback"}},
		"to": obj{"type": "integer", "description": "rollback: the version to return to (default the one before the current)"}}),
	"Tools": props([]string{"tools", "mcp"}, obj{
		"tools": arrayOf(props([]string{"name", "server", "access", "enabled", "description"}, obj{"name": str(),
			"server": obj{"type": "string", "description": "built-in, skill, or the MCP server's name"},
			"access": obj{"type": "string", "enum": []string{"read", "write", "read and write"}}, "enabled": boolean(),
			"why":  obj{"type": "string", "description": "why a tool is not offered"},
			"asks": obj{"type": "string", "description": "its actions that wait for a human's yes"}, "description": str()})),
		"mcp": arrayOf(props([]string{"name", "state"}, obj{"name": str(), "transport": str(), "state": str(), "error": str(),
			"restarts": integer(), "tools": integer()}))}),
	"Grant": props([]string{"id", "user", "thread", "tool", "target", "created_at"}, obj{"id": str(), "user": str(), "thread": str(),
		"tool": str(), "action": str(), "target": str(), "label": str(), "covers_tasks": boolean(),
		"expires_at": obj{"type": "string", "format": "date-time", "description": "absent: until revoked"}, "created_at": strFmt("date-time"),
		"created_by": str(), "last_used_at": strFmt("date-time"), "uses": integer()}),
	"Grants":     props([]string{"items"}, obj{"items": arrayOf(ref("Grant"))}),
	"Policy":     props([]string{"text", "policy"}, obj{"text": str(), "policy": obj{"type": "object"}}),
	"PolicyText": obj{"type": "string", "description": "the policy file's YAML"},
	"PolicyCheck": props([]string{"valid", "problems"}, obj{"valid": boolean(), "problems": arrayOf(props([]string{"line", "column", "message"},
		obj{"line": integer(), "column": integer(), "message": str()}))}),
	"MessageIn": props([]string{"user_id", "text"}, obj{"user_id": integer(), "text": str(),
		"deliver": obj{"type": "boolean", "default": true, "description": "also send the answer to the user's Telegram chat"}}),
	"MessageOut": props([]string{"answer", "delivered"}, obj{"answer": str(), "delivered": boolean()}),
	"ResearchTrace": props([]string{"id", "user", "question", "status", "created_at"}, obj{"id": str(), "user": str(), "thread": str(),
		"question": str(), "depth": str(), "status": obj{"type": "string", "enum": []string{"running", "answered", "partial", "abstained", "over_budget"}},
		"tainted": boolean(), "answer": obj{"type": "object", "description": "the research tool's result: answer, sources, confidence, tiers, spend"},
		"state":      obj{"type": "object", "description": "the trace: plan, tiers tried, retrievals, dropped claims, refused requests, spend"},
		"created_at": strFmt("date-time"), "updated_at": strFmt("date-time")}),
	"ResearchPage": pageOf("ResearchTrace"),
}

var statusText = map[int]string{400: "bad input", 401: "no or unknown token", 403: "the token's scope is short, or (PUT /api/v1/policy) the edit would widen the policy",
	404: "not found", 422: "the policy text is invalid; nothing changed"}

// openAPIDoc builds the OpenAPI 3.1 document from the route table.
func (s *Server) openAPIDoc() obj {
	paths := obj{}
	for _, rt := range s.apiRoutes() {
		item, _ := paths[rt.path].(obj)
		if item == nil {
			item = obj{}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = operation(rt)
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": "Kairos query API", "version": kairos.Version,
			"description": "Read and steer a Kairos agent. Authorization: Bearer <token from kairos token create>; scopes read < write < admin, each covering the ones before it (x-scope names an operation's). Lists page with limit and cursor (next_cursor)."},
		"paths": paths,
		"components": obj{"schemas": schemas,
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer"}}},
	}
}

func operation(rt route) obj {
	op := obj{"summary": rt.summary, "operationId": strings.ToLower(rt.method) + strings.NewReplacer("/api/v1/", "_", "/", "_", "{", "", "}", "", ".", "_").Replace(rt.path)}
	var ps []obj
	for _, p := range rt.params {
		ps = append(ps, obj{"name": p.name, "in": p.in, "required": p.required || p.in == "path", "schema": obj{"type": p.typ}, "description": p.desc})
	}
	if ps != nil {
		op["parameters"] = ps
	}
	if rt.body != "" {
		ct := "application/json"
		if rt.body == "PolicyText" {
			ct = "application/yaml"
		}
		op["requestBody"] = obj{"required": true, "content": obj{ct: obj{"schema": ref(rt.body)}}}
	}
	resp := obj{strconv.Itoa(rt.status): obj{"description": "ok", "content": obj{"application/json": obj{"schema": ref(rt.response)}}}}
	errs := rt.errors
	if rt.scope != "" {
		errs = append([]int{401, 403}, errs...)
		op["security"] = []obj{{"bearer": []string{}}}
		op["x-scope"] = rt.scope
	}
	for _, code := range errs {
		resp[strconv.Itoa(code)] = obj{"description": statusText[code], "content": obj{"application/json": obj{"schema": ref("Error")}}}
	}
	if rt.path == "/api/v1/policy" && rt.method == "PUT" { // 422 carries the problems
		resp["422"] = obj{"description": statusText[422], "content": obj{"application/json": obj{"schema": ref("PolicyCheck")}}}
	}
	op["responses"] = resp
	return op
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.doc())
}

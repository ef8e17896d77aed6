package kairos

// Action names: what a tool call does (ToolAction.Name), as the agent's
// envelopes grant them and the policy's approvals.required lists them.
// One list, here, so that a misspelt name can never silently need no
// approval: policy validation refuses names that are not in Actions.
const (
	ActionSearch           = "search"
	ActionMemoryStore      = "memory.store"
	ActionMemoryRecall     = "memory.recall"
	ActionMemoryList       = "memory.list"
	ActionMemoryForget     = "memory.forget"
	ActionCodeExecute      = "code.execute"
	ActionCodeGenerate     = "code.generate"
	ActionCodeStatus       = "code.status"
	ActionCodeNetworkWrite = "code.network_write" // a cell that writes to the network
	ActionCodeSecrets      = "code.secrets"       // a cell that reads secrets
	ActionScheduleCreate   = "schedule.create"    // a reminder, task or watching cell (impactful)
	ActionScheduleList     = "schedule.list"
	ActionScheduleCancel   = "schedule.cancel" // impactful
	ActionMCPRead          = "mcp.read"        // an MCP tool the policy marks impact: read
	ActionMCPWrite         = "mcp.write"       // any other MCP tool (impactful)
	ActionSkillList        = "skill.list"      // list, show
	ActionSkillTest        = "skill.test"      // run a skill's tests (also a create or update whose tests fail)
	ActionSkillCreate      = "skill.create"    // BUILD: a new skill (impactful, always asks)
	ActionSkillUpdate      = "skill.update"    // UPDATE: a new version (impactful, always asks)
	ActionSkillRollback    = "skill.rollback"  // back to a kept version (impactful, always asks)
	ActionSkillRun         = "skill.run"       // a skill__<name> call
	ActionResearch         = "research"        // seed 004's tiered research (reads only)
)

// Capabilities a tool action needs (ToolAction.Capability).
const (
	CapSearch      = "search"
	CapMemoryRead  = "memory.read"
	CapMemoryWrite = "memory.write"
	CapCode        = "code"
	CapCodeNetwork = "code.network"
	CapSchedule    = "schedule"
	CapMCP         = "mcp"
	CapSkill       = "skill"
	CapResearch    = "research"
)

// Actions lists every built-in action name, in a stable order.
var Actions = []string{
	ActionSearch, ActionMemoryStore, ActionMemoryRecall, ActionMemoryList, ActionMemoryForget,
	ActionCodeExecute, ActionCodeGenerate, ActionCodeStatus, ActionCodeNetworkWrite, ActionCodeSecrets,
	ActionScheduleCreate, ActionScheduleList, ActionScheduleCancel,
	ActionMCPRead, ActionMCPWrite,
	ActionSkillList, ActionSkillTest, ActionSkillCreate, ActionSkillUpdate, ActionSkillRollback, ActionSkillRun,
	ActionResearch,
}

// WriteActions are the actions that change something: the user's memory,
// the schedule, a skill, the network through a cell, an MCP server's
// data. The others only read (the console's tools table says read or
// write from this list).
var WriteActions = []string{
	ActionMemoryStore, ActionMemoryForget, ActionCodeNetworkWrite, ActionScheduleCreate, ActionScheduleCancel,
	ActionMCPWrite, ActionSkillCreate, ActionSkillUpdate, ActionSkillRollback,
}

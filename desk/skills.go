package desk

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

// SkillButtonPrefix starts the callback data of the /skills buttons
// (Disable, Enable, Rollback, Share).
const SkillButtonPrefix = "sk:"

// Skills is the desk's side of the skills: /skills, /skills NAME and the
// buttons of the list, the console's actions and `kairos skill rollback`.
type Skills struct {
	Store  kairos.SkillStore
	Policy func() *kairos.Policy
	// Changed tells the skill tools a skill changed (they re-read it).
	Changed func()
}

// Command is /skills: the user's skills (and the shared ones), each with
// Disable or Enable and Rollback buttons; an operator also gets Share.
// It exists only while features.self_update is on.
func (sk *Skills) Command() Command {
	return Command{Name: "skills", Description: "Your skills, with Disable and Rollback buttons: /skills [name]",
		Available: func(p *kairos.Policy) bool { return p.Features.SelfUpdate },
		Reply:     sk.list}
}

func (sk *Skills) list(ctx context.Context, in *kairos.Inbound, args string) (*kairos.Outgoing, error) {
	if name := strings.TrimSpace(args); name != "" {
		text, err := sk.Show(ctx, in.UserKey(), name)
		return &kairos.Outgoing{Text: text}, err
	}
	list, err := sk.Store.Skills(ctx, kairos.SkillFilter{Owner: in.UserKey(), WithShared: true})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return &kairos.Outgoing{Text: "You have no skills yet. Ask me to build one (\"make a skill that …\")."}, nil
	}
	op := sk.Policy().IsOperator(in.UserID)
	out := &kairos.Outgoing{}
	var sb strings.Builder
	sb.WriteString("Your skills (/skills NAME shows one):\n")
	for _, s := range list {
		sb.WriteString(SkillLine(s) + "\n")
		if s.Owner == in.UserKey() || op {
			out.Buttons = append(out.Buttons, skillButtons(s, op))
		}
	}
	out.Text = sb.String()
	return out, nil
}

func skillButtons(s *kairos.Skill, op bool) []kairos.Button {
	id := strconv.FormatInt(s.ID, 10)
	p := SkillButtonPrefix
	row := []kairos.Button{{Text: "Disable " + s.Name, Data: p + "disable:" + id}}
	if !s.Enabled {
		row[0] = kairos.Button{Text: "Enable " + s.Name, Data: p + "enable:" + id}
	}
	if s.Version > 1 {
		row = append(row, kairos.Button{Text: "Rollback " + s.Name, Data: p + "rollback:" + id})
	}
	if op && s.Scope != kairos.SkillScopeShared {
		row = append(row, kairos.Button{Text: "Share " + s.Name, Data: p + "share:" + id})
	}
	return row
}

// SkillLine is a skill in a list: name, version, description, runs and
// marks.
func SkillLine(sk *kairos.Skill) string {
	desc := ""
	if sk.Current != nil {
		desc = sk.Current.Description
	}
	var marks []string
	if !sk.Enabled {
		marks = append(marks, "disabled: "+orText(sk.DisabledReason, "by its owner"))
	}
	if sk.Scope == kairos.SkillScopeShared {
		marks = append(marks, "shared")
	}
	if sk.Tainted {
		marks = append(marks, "untrusted origin")
	}
	line := fmt.Sprintf("- *%s* v%d: %s (%d runs, %d failed)", EscapeMD(sk.Name), sk.Version, EscapeMD(desc), sk.Runs, sk.RunFailures)
	if len(marks) > 0 {
		line += " [" + strings.Join(marks, "; ") + "]"
	}
	return line
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// EscapeMD neutralises Markdown in user-controlled text a reply embeds.
func EscapeMD(s string) string {
	return strings.NewReplacer("\\", "\\\\", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "~", "\\~").Replace(s)
}

// Show is /skills NAME: the code, tests and versions of one skill.
func (sk *Skills) Show(ctx context.Context, owner, name string) (string, error) {
	s, err := sk.Store.FindSkill(ctx, owner, strings.TrimPrefix(name, kairos.SkillToolPrefix))
	if err != nil {
		return "", err
	}
	vs, err := sk.Store.SkillVersions(ctx, s.ID)
	if err != nil {
		return "", err
	}
	var kept []string
	for _, v := range vs {
		kept = append(kept, strconv.Itoa(v.Version))
	}
	var sb strings.Builder
	sb.WriteString(SkillLine(s) + "\n")
	fmt.Fprintf(&sb, "Versions kept: %s\n", strings.Join(kept, ", "))
	if v := s.Current; v != nil {
		fmt.Fprintf(&sb, "Risk: %s\n", orText(strings.Join(v.Risk, ", "), "none"))
		for _, t := range v.Tests {
			fmt.Fprintf(&sb, "Test %s: %s → %s\n", EscapeMD(t.Name), EscapeMD(kairos.Clip(string(t.Input), 200)), EscapeMD(kairos.Clip(string(t.Expect), 200)))
		}
		fmt.Fprintf(&sb, "```\n%s\n```", strings.ReplaceAll(kairos.Clip(v.Code, 3000), "```", "'''"))
	}
	return sb.String(), nil
}

// ByID finds a skill of any owner by its id (buttons and the console name
// skills by id); ENOTFOUND when it is gone.
func (sk *Skills) ByID(ctx context.Context, id int64) (*kairos.Skill, error) {
	list, err := sk.Store.Skills(ctx, kairos.SkillFilter{})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, kairos.Errorf(kairos.ENOTFOUND, "That skill is gone.")
}

// Button handles Disable, Enable, Rollback and Share (data without the
// prefix). The owner or an operator may press them; Share is an
// operator's decision.
func (sk *Skills) Button(ctx context.Context, from int64, data string) (string, bool, error) {
	verb, idText, _ := strings.Cut(data, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return "", false, errUnknownButton
	}
	s, err := sk.ByID(ctx, id)
	if err != nil {
		return "", false, err
	}
	op := sk.Policy().IsOperator(from)
	if s.Owner != kairos.UserKey(kairos.ChannelTelegram, from) && !op {
		return "", false, kairos.Errorf(kairos.EFORBIDDEN, "Only its owner or an operator can change it.")
	}
	answer, err := sk.Apply(ctx, s, verb, 0, op)
	if err != nil {
		return "", false, err
	}
	return answer, true, nil
}

// Apply disables, enables, rolls back (to version `to`, or the newest
// kept before the current) or shares a skill.
func (sk *Skills) Apply(ctx context.Context, s *kairos.Skill, verb string, to int, operator bool) (string, error) {
	said, err := ApplySkillVerb(ctx, sk.Store, s, verb, to, operator)
	if err == nil && sk.Changed != nil {
		sk.Changed()
	}
	return said, err
}

// ApplySkillVerb is Apply on a store alone (`kairos skill rollback` on the
// host, with no skill tools to tell).
func ApplySkillVerb(ctx context.Context, st kairos.SkillStore, s *kairos.Skill, verb string, to int, operator bool) (string, error) {
	switch verb {
	case "disable":
		return "Disabled " + s.Name + ".", st.SetSkillEnabled(ctx, s.ID, false, "disabled by hand")
	case "enable":
		return "Enabled " + s.Name + ".", st.SetSkillEnabled(ctx, s.ID, true, "")
	case "share", "unshare":
		if !operator {
			return "", kairos.Errorf(kairos.EFORBIDDEN, "Only an operator can share a skill.")
		}
		scope := map[string]string{"share": kairos.SkillScopeShared, "unshare": kairos.SkillScopeUser}[verb]
		return "Skill " + s.Name + " is now " + scope + ".", st.SetSkillScope(ctx, s.ID, scope)
	case "rollback":
		vs, err := st.SkillVersions(ctx, s.ID)
		if err != nil {
			return "", err
		}
		for _, v := range vs { // newest first
			if (to != 0 && v.Version == to && to != s.Version) || (to == 0 && v.Version < s.Version) {
				if err := st.SetSkillVersion(ctx, s.ID, v.Version); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s is back at version %d.", s.Name, v.Version), nil
			}
		}
		return "", kairos.Errorf(kairos.ENOTFOUND, "No kept version of %s to roll back to.", s.Name)
	}
	return "", errUnknownButton
}

// Stats is the per-skill part of /codestats.
func (sk *Skills) Stats(ctx context.Context, owner string) string {
	list, err := sk.Store.Skills(ctx, kairos.SkillFilter{Owner: owner})
	if err != nil || len(list) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n\nSkills:")
	for _, s := range list {
		fmt.Fprintf(&sb, "\n- %s: %d runs, %d failed", EscapeMD(s.Name), s.Runs, s.RunFailures)
	}
	return sb.String()
}

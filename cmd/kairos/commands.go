package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Command is one entry of the command table: `kairos NAME [flags] ARGS`.
//
// To add a command, put one register call in an init function of the file
// that holds its code (see ops.go for examples):
//
//	func init() {
//		register(Command{
//			Name:  "token list",              // the words after `kairos`
//			Usage: "[--json]",                // what follows the name
//			Short: "list the API tokens",     // one line for `kairos help`
//			Long:  "Lists …\n\nExit status: 0 ok, 1 failure.",
//			Flags: func(fs *flag.FlagSet) { fs.Bool("json", false, "print JSON") },
//			Args:  Args{Max: 0},
//			Config: true,                     // needs the environment (doc/config.md)
//			Run: func(ctx context.Context, m *Main, inv *Invocation) error {
//				db, err := m.openStoreRO(ctx) …
//			},
//		})
//	}
//
// Everything else comes from the entry: `kairos help`, `kairos help NAME`,
// `-h`/`--help` (usage on stdout, exit 0, nothing run), unknown flags and a
// wrong number of arguments (exit 2 with the usage). A name of two words
// makes the first a group: `kairos help token` lists its commands.
// Flags may come before, between or after the arguments; `--` ends them.
type Command struct {
	Name  string
	Usage string
	Short string
	Long  string
	// Flags defines the command's flags on a fresh set for each
	// invocation (Main may run many times in one process, as tests do).
	Flags func(fs *flag.FlagSet)
	Args  Args
	// Config loads and validates the environment (Main.Config) before
	// Run; commands that need none (version, clock parse) run with any
	// environment.
	Config bool
	Run    func(ctx context.Context, m *Main, inv *Invocation) error
}

// Args bounds the number of positional arguments; Max < 0 is no bound.
type Args struct{ Min, Max int }

// Invocation is one parsed command line.
type Invocation struct {
	Cmd   *Command
	Flags *flag.FlagSet
	Args  []string
}

// String returns a flag's value as text.
func (inv *Invocation) String(name string) string { return inv.Flags.Lookup(name).Value.String() }

// Bool returns a boolean flag.
func (inv *Invocation) Bool(name string) bool {
	return inv.Flags.Lookup(name).Value.(flag.Getter).Get().(bool)
}

// Int64 returns an int64 flag.
func (inv *Invocation) Int64(name string) int64 {
	return inv.Flags.Lookup(name).Value.(flag.Getter).Get().(int64)
}

var commands = map[string]*Command{}

// register adds a command to the table; a duplicate name is a programming
// error.
func register(c Command) {
	if _, dup := commands[c.Name]; dup {
		panic("kairos: command registered twice: " + c.Name)
	}
	if c.Run == nil {
		panic("kairos: command without Run: " + c.Name)
	}
	commands[c.Name] = &c
}

// commandNames lists the table sorted, the bot and terminal first.
func sortedCommands() []*Command {
	first := map[string]int{"run": 0, "chat": 1, "migrate": 2}
	cs := make([]*Command, 0, len(commands))
	for _, c := range commands {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, aok := first[cs[i].Name]
		b, bok := first[cs[j].Name]
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return cs[i].Name < cs[j].Name
	})
	return cs
}

// lookup finds the command named by the first one or two words of args
// and returns the rest; group is set when args name a group only.
func lookup(args []string) (cmd *Command, rest []string, group string) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:], ""
		}
	}
	if c, ok := commands[args[0]]; ok {
		return c, args[1:], ""
	}
	for name := range commands {
		if strings.HasPrefix(name, args[0]+" ") {
			return nil, args[1:], args[0]
		}
	}
	return nil, args[1:], ""
}

func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// writeUsage prints the list of commands.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: kairos <command> [flags] [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range sortedCommands() {
		writeLine(w, c)
	}
	fmt.Fprintln(w, "\n`kairos help COMMAND` (or `kairos COMMAND --help`) shows one command; `kairos --version` the version.")
	fmt.Fprintln(w, "Configuration: environment variables, see doc/config.md.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime failure, 2 usage or configuration error.")
}

func usageOf(write func(io.Writer)) string {
	var b strings.Builder
	write(&b)
	return strings.TrimRight(b.String(), "\n")
}

func writeLine(w io.Writer, c *Command) {
	left := c.Name
	if c.Usage != "" {
		left += " " + c.Usage
	}
	if len(left) > 30 {
		fmt.Fprintf(w, "  %s\n  %-30s %s\n", left, "", c.Short)
		return
	}
	fmt.Fprintf(w, "  %-30s %s\n", left, c.Short)
}

// writeGroupUsage lists the commands of a group (`kairos help clock`).
func writeGroupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: kairos %s <command> [flags] [arguments]\n\ncommands:\n", group)
	for _, c := range sortedCommands() {
		if strings.HasPrefix(c.Name, group+" ") {
			writeLine(w, c)
		}
	}
	fmt.Fprintf(w, "\n`kairos help %s COMMAND` shows one command.\n", group)
}

// writeHelp prints one command's help.
func writeHelp(w io.Writer, c *Command) {
	fmt.Fprintf(w, "usage: kairos %s", c.Name)
	if c.Usage != "" {
		fmt.Fprintf(w, " %s", c.Usage)
	}
	fmt.Fprintf(w, "\n\n%s\n", c.Short)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	}
	fs := newFlagSet(c)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if c.Config {
		fmt.Fprintln(w, "\nConfiguration: environment variables, see doc/config.md.")
	}
	if !strings.Contains(c.Long, "Exit status") { // a command that says more says it once
		fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime failure, 2 usage or configuration error.")
	}
}

func newFlagSet(c *Command) *flag.FlagSet {
	fs := flag.NewFlagSet("kairos "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.Flags != nil {
		c.Flags(fs)
	}
	return fs
}

// parseInterspersed parses flags wherever they stand among the
// arguments (`clock parse 9am --tz UTC`); `--` ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseCommand resolves the command line into an invocation, or prints
// help (stdout) and returns nil.
func (m *Main) parseCommand(args []string) (*Invocation, error) {
	if len(args) == 0 {
		return nil, usagef("no command given\n\n%s", usageOf(writeUsage))
	}
	switch a := args[0]; {
	case isHelpFlag(a):
		writeUsage(m.Stdout)
		return nil, nil
	case a == "help":
		return nil, m.help(args[1:])
	case a == "--version" || a == "-version":
		args = []string{"version"}
	}
	cmd, rest, group := lookup(args)
	if cmd == nil && group != "" {
		if len(rest) > 0 && isHelpFlag(rest[0]) {
			writeGroupUsage(m.Stdout, group)
			return nil, nil
		}
		gu := usageOf(func(w io.Writer) { writeGroupUsage(w, group) })
		if len(rest) == 0 {
			return nil, usagef("%s: a command is required\n\n%s", group, gu)
		}
		return nil, usagef("unknown command %q\n\n%s", group+" "+rest[0], gu)
	}
	if cmd == nil {
		return nil, usagef("unknown command %q\n\n%s", args[0], usageOf(writeUsage))
	}
	fs := newFlagSet(cmd)
	pos, err := parseInterspersed(fs, rest)
	if err == flag.ErrHelp {
		writeHelp(m.Stdout, cmd)
		return nil, nil
	}
	if err == nil {
		err = checkArgs(cmd, pos)
	}
	if err != nil {
		return nil, usagef("%v\nusage: kairos %s\n(`kairos help %s` for more)", err, strings.TrimSpace(cmd.Name+" "+cmd.Usage), cmd.Name)
	}
	return &Invocation{Cmd: cmd, Flags: fs, Args: pos}, nil
}

func checkArgs(c *Command, pos []string) error {
	switch {
	case len(pos) < c.Args.Min:
		return fmt.Errorf("%s: missing argument", c.Name)
	case c.Args.Max >= 0 && len(pos) > c.Args.Max:
		return fmt.Errorf("%s: unexpected argument %q", c.Name, pos[c.Args.Max])
	}
	return nil
}

// help is `kairos help [COMMAND]`.
func (m *Main) help(args []string) error {
	if len(args) == 0 {
		writeUsage(m.Stdout)
		return nil
	}
	cmd, rest, group := lookup(args)
	switch {
	case cmd != nil && len(rest) == 0:
		writeHelp(m.Stdout, cmd)
		return nil
	case cmd == nil && group != "" && len(rest) == 0:
		writeGroupUsage(m.Stdout, group)
		return nil
	}
	return usagef("help: unknown command %q", strings.Join(args, " "))
}

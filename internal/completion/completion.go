// Package completion writes shell completion scripts for a program whose subcommands take
// pflag flags: bash, zsh (through its bash compatibility) and fish. The scripts complete the
// subcommand, its long flags, and the values of flags that take one of a fixed set. Closest
// names the command or flag a mistyped word was meant to be.
package completion

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// Command is one subcommand: its name, one line saying what it does, and its flags.
type Command struct {
	Name, Summary string
	Flags         *pflag.FlagSet
}

// Config is what a script completes.
type Config struct {
	// Program is the executable's name.
	Program  string
	Commands []Command
	// Values lists the values flag of command cmd takes (nil: any, completed as a file).
	Values func(cmd, flag string) []string
}

// Shells are the shells Write knows.
var Shells = []string{"bash", "zsh", "fish"}

// Write writes c's completion script for shell.
func Write(w io.Writer, shell string, c Config) error {
	if c.Values == nil {
		c.Values = func(string, string) []string { return nil }
	}
	switch shell {
	case "bash":
		return writeBash(w, c)
	case "zsh":
		fmt.Fprintln(w, "autoload -U +X bashcompinit && bashcompinit")
		return writeBash(w, c)
	case "fish":
		return writeFish(w, c)
	}
	return fmt.Errorf("no completion for shell %q (want %s)", shell, strings.Join(Shells, ", "))
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_]`)

func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	return names
}

func writeBash(w io.Writer, c Config) error {
	fn := "_" + unsafe.ReplaceAllString(c.Program, "_")
	var names []string
	for _, cmd := range c.Commands {
		names = append(names, cmd.Name)
	}
	fmt.Fprintf(w, "# %s completion for bash\n%s() {\n", c.Program, fn)
	fmt.Fprintln(w, "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}")
	fmt.Fprintf(w, "\tif [[ $COMP_CWORD -eq 1 ]]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(names, " "))
	fmt.Fprintln(w, "\tcase \"$cmd $prev\" in")
	for _, cmd := range c.Commands {
		cmd.Flags.VisitAll(func(f *pflag.Flag) {
			if v := c.Values(cmd.Name, f.Name); len(v) > 0 {
				fmt.Fprintf(w, "\t%q) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", cmd.Name+" --"+f.Name, strings.Join(v, " "))
			}
		})
	}
	fmt.Fprintln(w, "\tesac")
	fmt.Fprintln(w, "\t[[ $cur == -* ]] || return # a file or a value: the shell's default")
	fmt.Fprintln(w, "\tcase $cmd in")
	for _, cmd := range c.Commands {
		fmt.Fprintf(w, "\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", cmd.Name, strings.Join(flagNames(cmd.Flags), " "))
	}
	fmt.Fprintf(w, "\tesac\n}\ncomplete -o default -F %s %s\n", fn, c.Program)
	return nil
}

func writeFish(w io.Writer, c Config) error {
	p := c.Program
	fmt.Fprintf(w, "# %s completion for fish\ncomplete -c %s -f\n", p, p)
	for _, cmd := range c.Commands {
		fmt.Fprintf(w, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", p, cmd.Name, fishQuote(cmd.Summary))
	}
	for _, cmd := range c.Commands {
		cmd.Flags.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			line := fmt.Sprintf("complete -c %s -n '__fish_seen_subcommand_from %s' -l %s", p, cmd.Name, f.Name)
			if f.Shorthand != "" {
				line += " -s " + f.Shorthand
			}
			if v := c.Values(cmd.Name, f.Name); len(v) > 0 {
				line += " -x -a " + fishQuote(strings.Join(v, " "))
			} else if f.Value.Type() != "bool" {
				line += " -r -F"
			}
			fmt.Fprintln(w, line+" -d "+fishQuote(firstLine(f.Usage)))
		})
	}
	return nil
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 70 {
		s = string(r[:67]) + "..."
	}
	return s
}

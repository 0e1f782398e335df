package completion

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func sample() Config {
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	run.String("provider", "", "provider")
	run.Duration("duration", 0, "how long")
	run.BoolP("quiet", "q", false, "no progress")
	report := pflag.NewFlagSet("report", pflag.ContinueOnError)
	report.String("format", "text", "output's format")
	return Config{Program: "rpcrdma-bench",
		Commands: []Command{{"run", "measure", run}, {"report", "render results", report}},
		Values: func(cmd, flag string) []string {
			switch {
			case flag == "provider":
				return []string{"soft", "verbs"}
			case cmd == "report" && flag == "format":
				return []string{"text", "csv"}
			}
			return nil
		}}
}

// complete runs the bash script's function on the words typed so far (the last one being
// completed) and returns what it offers.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	prog := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + string(rune('0'+len(words)-1)) +
		"\n_rpcrdma_bench\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

func TestBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	var b bytes.Buffer
	if err := Write(&b, "bash", sample()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"rpcrdma-bench", "r"}, "run report"},
		{[]string{"rpcrdma-bench", "run", "--"}, "--duration --provider --quiet"},
		{[]string{"rpcrdma-bench", "run", "--d"}, "--duration"},
		{[]string{"rpcrdma-bench", "run", "--provider", ""}, "soft verbs"},
		{[]string{"rpcrdma-bench", "report", "--format", "c"}, "csv"},
		{[]string{"rpcrdma-bench", "run", "--duration", ""}, ""}, // any value: the shell's default
		{[]string{"rpcrdma-bench", "report", "file"}, ""},
	} {
		if got := strings.Join(complete(t, b.String(), tc.words...), " "); got != tc.want {
			t.Errorf("%q: offered %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestZshAndFish(t *testing.T) {
	var z, f bytes.Buffer
	if err := Write(&z, "zsh", sample()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(z.String(), "autoload -U +X bashcompinit && bashcompinit\n") || !strings.Contains(z.String(), "complete -o default -F _rpcrdma_bench rpcrdma-bench") {
		t.Errorf("zsh:\n%s", z.String())
	}
	if err := Write(&f, "fish", sample()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"complete -c rpcrdma-bench -n __fish_use_subcommand -a run -d 'measure'",
		"complete -c rpcrdma-bench -n '__fish_seen_subcommand_from run' -l provider -x -a 'soft verbs' -d 'provider'",
		"complete -c rpcrdma-bench -n '__fish_seen_subcommand_from run' -l quiet -s q -d 'no progress'",
		"complete -c rpcrdma-bench -n '__fish_seen_subcommand_from run' -l duration -r -F -d 'how long'",
		"complete -c rpcrdma-bench -n '__fish_seen_subcommand_from report' -l format -x -a 'text csv' -d 'output\\'s format'",
	} {
		if !strings.Contains(f.String(), want+"\n") {
			t.Errorf("fish lacks %q:\n%s", want, f.String())
		}
	}
	if err := Write(&f, "tcsh", sample()); err == nil || !strings.Contains(err.Error(), `"tcsh" (want bash, zsh, fish)`) {
		t.Errorf("tcsh: %v", err)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"run", "report", "sweep", "server"}
	for word, want := range map[string]string{"rnu": "run", "sweeep": "sweep", "serevr": "server", "compare": "", "": ""} {
		if got := Closest(word, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
}

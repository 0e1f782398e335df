package main

import (
	"strings"
	"testing"
)

// The completion scripts come from the commands' real flag sets: every command, their
// flags, and the fixed values of the flags that take one.
func TestCompletion(t *testing.T) {
	code, out, errOut := runMain(t, "completion", "bash")
	if code != exitOK || errOut != "" {
		t.Fatalf("completion bash: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"compgen -W \"client compare devices", " sweep version",
		`"sweep --provider") COMPREPLY=($(compgen -W "soft`, `"compare --format") COMPREPLY=($(compgen -W "text markdown json junit bmf"`,
		"--repeat", "--baseline", "--thresholds", "complete -o default -F _rpcrdma_bench rpcrdma-bench"} {
		if !strings.Contains(out, want) {
			t.Errorf("bash script lacks %q", want)
		}
	}
	if code, out, _ := runMain(t, "completion", "fish"); code != exitOK || !strings.Contains(out, "complete -c rpcrdma-bench -n '__fish_seen_subcommand_from run' -l poll -x -a 'busy event hybrid'") {
		t.Errorf("completion fish: exit %d:\n%s", code, out)
	}
	if code, _, errOut := runMain(t, "completion"); code != exitUsage || !strings.Contains(errOut, "completion bash|zsh|fish") {
		t.Errorf("completion without a shell: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "completion", "tcsh"); code != exitUsage || !strings.Contains(errOut, `no completion for shell "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, %q", code, errOut)
	}
}

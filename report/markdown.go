package report

import (
	"strings"
)

// mdReplacer escapes text for a Markdown paragraph or table cell: the punctuation that would
// start emphasis, code, links or a cell boundary is backslash-escaped, and the characters of
// HTML are written as entities, since Markdown passes raw HTML through.
var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `|`, `\|`, `#`, `\#`,
	`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", "\r\n", " ", "\n", " ", "\r", " ",
)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// mdTable writes t as a GitHub-flavoured Markdown table, every cell escaped and the numeric
// columns right-aligned. An empty cell is written as a space so that the row keeps its cells.
func mdTable(t table) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(mdEscape(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	line(t.Head)
	b.WriteString("|")
	for i := range t.Head {
		if i < len(t.Num) && t.Num[i] {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		line(r.Cells)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mdFence writes s as a fenced code block, with a fence longer than any run of backticks in s
// so that s cannot close it.
func mdFence(s, lang string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimSuffix(s, "\n") + "\n" + fence
}

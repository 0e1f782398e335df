package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

var (
	runsOnce        sync.Once
	softRun, rxeRun *results.Run
)

// testRuns are built once: recording the sweeps is the slow part of these tests.
func testRuns(t testing.TB) (*results.Run, *results.Run) {
	runsOnce.Do(func() { softRun, rxeRun = soft.Run(t), rxe.Run(t) })
	return softRun, rxeRun
}

// clone copies a run deeply enough for a test to change its points and environment.
func clone(r *results.Run) *results.Run {
	c := *r
	c.Points = slices.Clone(r.Points)
	if r.Environment.Device != nil {
		d := *r.Environment.Device
		c.Environment.Device = &d
	}
	return &c
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	s, x := testRuns(t)
	cfg := Config{Sources: []string{"results/soft.json", "results/rxe.json"}}
	dir := t.TempDir()
	h, m, err := Write([]*results.Run{s, x}, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h != filepath.Join(dir, "report.html") || m != filepath.Join(dir, "report.md") {
		t.Fatalf("paths %s, %s", h, m)
	}
	html, md := read(t, h), read(t, m)
	checkHTML(t, html)

	// Every image the Markdown links is a PNG written beside it.
	links := regexp.MustCompile(`!\[[^]]*\]\(([^)]+)\)`).FindAllSubmatch(md, -1)
	if len(links) < 5 {
		t.Fatalf("markdown links %d charts, want at least 5", len(links))
	}
	for _, l := range links {
		b := read(t, filepath.Join(dir, string(l[1])))
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", l[1], err)
		}
	}
	if n := bytes.Count(html, []byte("<svg ")); n != len(links) {
		t.Errorf("html inlines %d SVG charts, markdown links %d", n, len(links))
	}
	for _, want := range []string{"soft0", "rxe0", "fe80::1 RoCE v2 eth0", "max_inline_data", "1.0", "Ethernet",
		"results/rxe.json", "v1, send 8192 B, recv 8192 B, R=1 [f6ab0e1801010707]", "rpc xid 0x2a: no reply in 1s",
		`<tr class="all`, "1–3", `<td class="n">–</td>`, "1073741824 B (1.0 GiB)", "6.12.0 #1 SMP", "go1.26, GOMAXPROCS 2"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("html lacks %q", want)
		}
	}

	// Deterministic: the same input written again gives the same bytes.
	dir2 := t.TempDir()
	h2, m2, err := Write([]*results.Run{s, x}, dir2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(html, read(t, h2)) || !bytes.Equal(md, read(t, m2)) {
		t.Fatal("two reports of the same runs differ")
	}
	golden(t, "report.html", html)
	golden(t, "report.md", md)
}

// checkHTML checks that the page is well-formed (the template writes XHTML-style markup, so
// encoding/xml can parse it strictly), has its key parts, unique ids, and that every link
// within the page has a target.
func checkHTML(t *testing.T, page []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	ids := map[string]bool{}
	var hrefs []string
	count := map[string]int{}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("html is not well-formed: %v (line %d)", err, bytes.Count(page[:d.InputOffset()], []byte("\n"))+1)
		}
		if se, ok := tok.(xml.StartElement); ok {
			count[se.Name.Local]++
			if se.Name.Local == "script" || se.Name.Local == "iframe" || se.Name.Local == "object" {
				t.Errorf("html has a <%s> element", se.Name.Local)
			}
			for _, a := range se.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Errorf("html has an event handler attribute %s", a.Name.Local)
				}
				switch a.Name.Local {
				case "id":
					if ids[a.Value] {
						t.Errorf("duplicate id %q", a.Value)
					}
					ids[a.Value] = true
				case "href":
					// Self-contained: links stay within the page; a chart's raster (the
					// heatmap's colour bar) is a data URI.
					switch {
					case strings.HasPrefix(a.Value, "#"):
						hrefs = append(hrefs, a.Value[1:])
					case se.Name.Local == "image" && strings.HasPrefix(a.Value, "data:image/"):
					default:
						t.Errorf("link to %.60q leaves the page", a.Value)
					}
				case "src":
					if !strings.HasPrefix(a.Value, "data:image/png;base64,") {
						t.Errorf("<%s src=%.40q> loads something from outside the page", se.Name.Local, a.Value)
					}
				}
			}
		}
	}
	for _, h := range hrefs {
		if !ids[h] {
			t.Errorf("link to #%s has no target", h)
		}
	}
	for _, el := range []string{"html", "head", "title", "style", "body", "h1", "nav", "table"} {
		if count[el] == 0 {
			t.Errorf("html has no <%s>", el)
		}
	}
	if count["html"] != 1 || count["h1"] != 1 || count["body"] != 1 {
		t.Errorf("html has %d <html>, %d <h1>, %d <body>; want one each", count["html"], count["h1"], count["body"])
	}
	if bytes.Contains(page, []byte("<?xml")) {
		t.Error("html embeds an XML declaration")
	}
}

// hostile is text from a results file that must come out as text.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&|*_`

func TestEscaping(t *testing.T) {
	s, _ := testRuns(t)
	r := clone(s)
	r.Environment.Device.Name = hostile
	r.Environment.Device.FirmwareVersion = hostile
	r.Environment.Hostname = hostile
	r.Environment.CPUModel = "</style><script>x</script>"
	r.Tool = "</title><script>x</script>"
	r.Status = results.Status{State: results.StateInterrupted, Message: hostile}
	r.Config = []byte(`{"note":"</pre><script>x</script>` + "```" + `"}`)
	r.Points[0].Params.Procedure = hostile
	r.Points[1].Errors = []results.ErrorStats{{Kind: hostile, Count: 1, Messages: []string{hostile}}}
	for _, usePNG := range []bool{false, true} {
		dir := t.TempDir()
		h, m, err := Write([]*results.Run{r}, dir, Config{Title: hostile, Sources: []string{hostile}, PNG: usePNG})
		if err != nil {
			t.Fatal(err)
		}
		html, md := read(t, h), read(t, m)
		checkHTML(t, html)
		low := bytes.ToLower(html)
		for _, bad := range []string{"<script", "<img src=x", "</style><", "</title><", "</pre><"} {
			if bytes.Contains(low, []byte(bad)) {
				t.Errorf("png=%v: html contains %q", usePNG, bad)
			}
		}
		if !bytes.Contains(html, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
			t.Errorf("png=%v: html does not show the device name as text", usePNG)
		}
		// Outside the fenced config block (code, shown verbatim), no markup passes through.
		prose := regexp.MustCompile("(?s)````json\n.*?\n````").ReplaceAll(md, nil)
		for _, bad := range []string{"<script", "<img", "</pre>"} {
			if bytes.Contains(bytes.ToLower(prose), []byte(bad)) {
				t.Errorf("markdown contains %q", bad)
			}
		}
		// The config goes into a fence longer than its own backticks, so it cannot close it.
		if !bytes.Contains(md, []byte("````json\n")) {
			t.Error("markdown config fence does not outrun the config's backticks")
		}
		// A cell holding | must not split the table: every row of a table has the same cells.
		checkMDTables(t, md)
	}
}

// checkMDTables checks that every row of every Markdown table has as many cells as its
// header: an unescaped | would add one.
func checkMDTables(t *testing.T, md []byte) {
	t.Helper()
	cells := func(line string) int {
		n := 0
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '|':
				n++
			}
		}
		return n
	}
	want := -1
	for _, l := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want = cells(l)
			continue
		}
		if got := cells(l); got != want {
			t.Errorf("markdown table row has %d separators, header %d: %s", got, want, l)
		}
	}
}

func TestBadInput(t *testing.T) {
	s, _ := testRuns(t)
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		runs []*results.Run
		cfg  Config
		want string
	}{
		"no runs":     {nil, Config{}, "no runs"},
		"nil run":     {[]*results.Run{s, nil}, Config{}, "run 2 is nil"},
		"sources":     {[]*results.Run{s}, Config{Sources: []string{"a", "b"}}, "2 sources given for 1 runs"},
		"name":        {[]*results.Run{s}, Config{Name: "../x"}, "not a plain file name"},
		"name dotdot": {[]*results.Run{s}, Config{Name: ".."}, "not a plain file name"},
	} {
		h, m, err := Write(tc.runs, dir, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
		if h != "" || m != "" {
			t.Errorf("%s: paths %q %q returned with the error", name, h, m)
		}
	}
	if _, _, err := Write(nil, dir, Config{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v is not ErrNoRuns", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left %d files", len(ents))
	}
}

// TestFailedRuns: a run that measured nothing still gets a page saying what happened; beside a
// good run it is reported and left out of the charts, with a note saying so.
func TestFailedRuns(t *testing.T) {
	s, _ := testRuns(t)
	failed := clone(s)
	failed.Points = nil
	failed.Status = results.Status{State: results.StateFailed, Message: "connect: rdma_resolve_addr: no route to host"}

	dir := t.TempDir()
	h, _, err := Write([]*results.Run{failed}, dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	html := read(t, h)
	checkHTML(t, html)
	for _, want := range []string{`<span class="status failed">failed</span> connect: rdma_resolve_addr: no route to host`,
		"no chart: no run has points", "This run measured no point", "1 run(s), 0 point(s); 1 run(s) did not complete"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("page of a failed run lacks %q", want)
		}
	}
	if bytes.Contains(html, []byte("<svg")) || bytes.Contains(html, []byte(`id="run-1-summary"`)) {
		t.Error("page of a run without points has charts or a summary")
	}

	cut := clone(s)
	cut.Status = results.Status{State: results.StateInterrupted, Message: "signal: interrupt"}
	cut.Points[len(cut.Points)-1].Complete = false
	h, m, err := Write([]*results.Run{failed, cut, s}, dir, Config{Name: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	html, md := read(t, h), read(t, m)
	checkHTML(t, html)
	for _, want := range []string{"run(s) 1 have no points and are not charted",
		"chart run 1 is run 2, chart run 2 is run 3", `<tr class="cut`, ">6*<", "* marks a point cut short",
		`<span class="status interrupted">interrupted</span> signal: interrupt`, "<svg "} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("mixed page lacks %q", want)
		}
	}
	if !bytes.Contains(md, []byte("**interrupted** signal: interrupt")) || !bytes.Contains(md, []byte(`| 6\* |`)) {
		t.Error("markdown lacks the interruption or the cut point marker")
	}

	// A state this package does not know, a run without a device, and an open-loop point.
	odd := clone(s)
	odd.Status = results.Status{State: "paused"}
	odd.Environment.Device = nil
	odd.Points[0].Params.RateRPS = 25000
	h, m, err = Write([]*results.Run{odd}, dir, Config{Name: "odd", NoCharts: true, Generated: resultstest.T0})
	if err != nil {
		t.Fatal(err)
	}
	html, md = read(t, h), read(t, m)
	checkHTML(t, html)
	for _, want := range []string{`<span class="status unknown">unknown state &#34;paused&#34;</span>`, "No device was opened.",
		"<th class=\"n\">rate RPC/s</th>", `<td class="n">25000</td>`, `<td class="n">closed</td>`,
		"generated 2026-11-22 04:00:00 UTC"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("odd page lacks %q", want)
		}
	}
	if !bytes.Contains(md, []byte("| device | none opened |")) || !bytes.Contains(md, []byte("generated 2026-11-22 04:00:00 UTC")) {
		t.Error("odd markdown lacks the missing device or the generation time")
	}

	// A corrupt histogram costs the charts that need it, not the page.
	bad := clone(s)
	bad.Points[0].Histogram = "not a histogram"
	h, _, err = Write([]*results.Run{bad}, dir, Config{Name: "corrupt"})
	if err == nil || h == "" {
		t.Fatalf("corrupt histogram: paths %q, error %v; want the page and an error", h, err)
	}
	if html := read(t, h); !bytes.Contains(html, []byte("charts left out: ")) || !bytes.Contains(html, []byte("<svg ")) {
		t.Error("page with a corrupt histogram does not name the charts left out, or has no chart at all")
	}
}

func TestPNGAndNoCharts(t *testing.T) {
	s, _ := testRuns(t)
	dir := t.TempDir()
	h, _, err := Write([]*results.Run{s}, dir, Config{PNG: true})
	if err != nil {
		t.Fatal(err)
	}
	html := read(t, h)
	checkHTML(t, html)
	if bytes.Contains(html, []byte("<svg")) || !bytes.Contains(html, []byte(`<img src="data:image/png;base64,iVBORw0KGgo`)) {
		t.Error("PNG page does not embed its charts as PNG data URIs")
	}

	dir = t.TempDir()
	h, m, err := Write([]*results.Run{s}, dir, Config{NoCharts: true, Name: "tables"})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 || filepath.Base(h) != "tables.html" || filepath.Base(m) != "tables.md" {
		t.Errorf("NoCharts wrote %d files (%s, %s), want just the two pages", len(ents), h, m)
	}
	if html := read(t, h); bytes.Contains(html, []byte("<svg")) || bytes.Contains(html, []byte(`href="#charts"`)) {
		t.Error("NoCharts page has charts")
	}
}

func TestSafeSVG(t *testing.T) {
	ok := `<?xml version="1.0"?>
<!-- comment -->
<svg width="1" height="1" viewBox="0 0 1 1" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<g transform="scale(1, -1)"><path d="M0,0L1,1Z" style="fill:#FFFFFF" /><text x="1" y="2" style="font-size:8px">a &lt;b&gt;</text>
<image x="0" y="0" width="1" height="1" xlink:href="data:image/png;base64,AAAA"/></g></svg>`
	got, err := safeSVG([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "<svg ") || !strings.HasSuffix(got, "</svg>") {
		t.Errorf("safeSVG kept %.30q...%q", got, got[len(got)-10:])
	}
	svg := func(inner string) string {
		return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">` + inner + `</svg>`
	}
	for name, doc := range map[string]string{
		"script":       svg(`<script>alert(1)</script>`),
		"handler":      svg(`<path d="M0,0" onload="alert(1)"/>`),
		"js link":      svg(`<image xlink:href="javascript:alert(1)"/>`),
		"remote image": svg(`<image xlink:href="https://example.com/x.png"/>`),
		"style url":    svg(`<path style="fill:url(https://example.com/x)"/>`),
		"foreign":      svg(`<foreignObject><div/></foreignObject>`),
		"stray text":   svg(`<g>text</g>`),
		"two roots":    svg(``) + svg(``),
		"unclosed":     `<svg><g>`,
		"none":         `<html/>`,
		"cdata":        svg(`<text><![CDATA[<script>x</script>]]></text>`),
		"mismatch":     `<svg><g></svg></g>`,
	} {
		if _, err := safeSVG([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %s", name, doc)
		}
	}
}

func TestMarkdownHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"plain 1.0":    "plain 1.0",
		"a|b":          `a\|b`,
		"<b>&":         "&lt;b&gt;&amp;",
		"*_`[x]#":      "\\*\\_\\`\\[x\\]\\#",
		"two\nlines\r": "two lines ",
		`back\slash`:   `back\\slash`,
	} {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"{}":        "```json\n{}\n```",
		"a ``` b\n": "````json\na ``` b\n````",
		"`````":     "``````json\n`````\n``````",
	} {
		if got := mdFence(in, "json"); got != want {
			t.Errorf("mdFence(%q) = %q, want %q", in, got, want)
		}
	}
	tb := table{Head: []string{"a", "n"}, Num: []bool{false, true}, Rows: []row{{Cells: []string{"x|y", ""}}}}
	if got, want := mdTable(tb), "| a | n |\n|---|--:|\n| x\\|y |  |"; got != want {
		t.Errorf("mdTable = %q, want %q", got, want)
	}
	if got := ranges([]int{1, 2, 3, 5, 7, 8}); got != "1–3, 5, 7–8" {
		t.Errorf("ranges = %q", got)
	}
}

func BenchmarkWrite(b *testing.B) {
	s, x := testRuns(b)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Write([]*results.Run{s, x}, dir, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The RDMA operations table has a row for each side: the responder's when it was counted,
// else a row saying it was not (never zeros that read as "no RDMA at all").
func TestOpsBothSides(t *testing.T) {
	r, _ := testRuns(t)
	r = clone(r)
	for i := range r.Points {
		r.Points[i].Negotiated = &results.Negotiated{Role: "requester"}
	}
	r.Points[0].PeerOps = &results.Ops{Read: results.OpCount{Count: 12345, Bytes: 99}, Write: results.OpCount{Count: 54321, Bytes: 77}}
	tb := opsTable(r)
	if len(tb.Rows) != 2*len(r.Points) {
		t.Fatalf("%d rows for %d points", len(tb.Rows), len(r.Points))
	}
	row := strings.Join(tb.Rows[1].Cells, "|")
	if tb.Rows[0].Cells[1] != "requester" || !strings.HasPrefix(row, "1|responder|") || !strings.Contains(row, "12") || !strings.Contains(row, "54") {
		t.Errorf("point 1: %q / %q", tb.Rows[0].Cells, row)
	}
	if got := tb.Rows[3].Cells[1]; got != "responder: not counted (another process)" {
		t.Errorf("point 2's responder: %q", got)
	}
}

// A point whose peer capped the offered threshold is noted on the page, both files.
func TestCappedThresholdNoted(t *testing.T) {
	s, _ := testRuns(t)
	r := clone(s)
	r.Points[0].Params.OfferedInlineThreshold = 4 * r.Points[0].Params.InlineThreshold
	dir := t.TempDir()
	h, m, err := Write([]*results.Run{r}, dir, Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	th := r.Points[0].Params.InlineThreshold
	want := "run 1: the peer capped the inline threshold: " + strconv.Itoa(4*th) + " offered, " + strconv.Itoa(th) + " in effect"
	for _, f := range []string{h, m} {
		if !strings.Contains(string(read(t, f)), want) {
			t.Errorf("%s lacks %q", f, want)
		}
	}
}

// The page says how good the data is, and names a threshold winner only beyond noise: five
// runs of a sweep whose 4 KiB ECHOs are short at 16 KiB and chunked at 1 KiB, one of them
// taken while other processes took the CPUs.
func TestDataQualityAndWinner(t *testing.T) {
	var runs []*results.Run
	for i := range 5 {
		runs = append(runs, resultstest.Sweep{Seed: uint64(i + 1), Thresholds: []int{1024, 16384}, Sizes: []int{4096}, RPCs: 2000}.Run(t))
	}
	other := 64.0
	for i := range runs[0].Points {
		runs[0].Points[i].HostOtherCPU = &other
		runs[0].Points[i].Disturbed = results.Disturbances(nil, 0, 2, &other)
	}
	h, m, err := Write(runs, t.TempDir(), Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	// The disturbed run is left out: the 4 others per threshold suffice for 3 comparisons.
	for _, page := range []struct {
		text   []byte
		winner string
	}{{read(t, h), "<td>16k, beyond noise</td>"}, {read(t, m), "| 16k, beyond noise |"}} {
		for _, want := range []string{"data quality: 2 of 10 point(s) disturbed: other processes used more than 10% of the CPUs (2); other processes used up to 64% of the host CPU time", page.winner} {
			if !bytes.Contains(page.text, []byte(want)) {
				t.Errorf("page lacks %q", want)
			}
		}
	}
	// From a single run it cannot tell.
	h, _, err = Write(runs[1:2], t.TempDir(), Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	if html := read(t, h); !bytes.Contains(html, []byte("cannot tell: 1 run(s) of a threshold")) || bytes.Contains(html, []byte("16k, beyond noise")) {
		t.Errorf("single run: the page names a winner")
	}
}

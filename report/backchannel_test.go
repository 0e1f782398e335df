package report

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// withBackchannel is a copy of r whose first point has callbacks and recalls.
func withBackchannel(t *testing.T, r *results.Run) *results.Run {
	t.Helper()
	rec := results.NewRecorder()
	rec.SetCallbacks([]string{"CB_NULL", "CB_COMPOUND"})
	for i := range 2000 {
		rec.RecordCallback(1, rpcproto.Short, int64(2000+7*i))
		if i%10 == 0 {
			rec.RecordRecall(int64(30000+i), int64(15000+2*i), int64(90000+5*i), uint64(i%3))
		}
	}
	rec.RecordCallback(0, rpcproto.Short, 500)
	rec.FailCallback(1, rpcproto.Short)
	rec.RecallNotGranted()
	q, err := results.Summarize(results.Params{}, time.Unix(0, 0), time.Unix(1, 0), rec)
	if err != nil {
		t.Fatal(err)
	}
	c := clone(r)
	c.Points[0].Callbacks, c.Points[0].Recalls = q.Callbacks, q.Recalls
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// section is the part of s from the line starting with from up to the next line starting
// with to.
func section(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("no %q in\n%s", from, s)
	}
	j := strings.Index(s[i+len(from):], to)
	if j < 0 {
		t.Fatalf("no %q after %q", to, from)
	}
	return s[i : i+len(from)+j]
}

// The page shows a point's callbacks and recalls in tables of their own, exactly so, in
// both files; the contents link them.
func TestBackchannelTables(t *testing.T) {
	s, _ := testRuns(t)
	r := withBackchannel(t, s)
	dir := t.TempDir()
	hp, mp, err := Write([]*results.Run{r}, dir, Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	md, html := string(read(t, mp)), string(read(t, hp))
	wantMD := `### Callbacks

The peer’s calls over the point’s own connections (RFC 8167 reverse direction), answered by this side: microseconds from a call’s arrival to the completion of the reply’s Send; errors are the calls answered with a failure (untimed).

| \# | proc | class | calls | p50 µs | p99 µs | max µs | errors |
|--:|---|---|--:|--:|--:|--:|--:|
| 1 | CB\_NULL | short | 1 | – | – | 0.50 | 0 |
| 1 | CB\_COMPOUND | short | 2001 | 9.00 | 15.86 | 15.99 | 1 |

### Delegation recalls

Per delegation recalled and returned, in microseconds: recall, from sending the conflicting OPEN to CB\_RECALL’s arrival; delegreturn, DELEGRETURN’s round trip; conflict, from first sending the conflicting OPEN to its success. Not granted: OPENs that asked for a read delegation and got none; retries: conflicting OPENs answered NFS4ERR\_DELAY.

| \# | latency | count | p50 µs | p90 µs | p99 µs | max µs | not granted | retries |
|--:|---|--:|--:|--:|--:|--:|--:|--:|
| 1 | recall | 200 | 30.99 | 31.79 | – | 31.99 | 1 | 199 |
| 1 | delegreturn | 200 | 16.99 | 18.59 | – | 18.98 |  |  |
| 1 | conflict | 200 | 94.97 | 99.01 | – | 99.95 |  |  |

`
	if got := section(t, md, "### Callbacks", "### Negotiated"); got != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, wantMD)
	}
	wantHTML := `<h3 id="run-1-callbacks">Callbacks</h3>
<p class="foot">The peer’s calls over the point’s own connections (RFC 8167 reverse direction), answered by this side: microseconds from a call’s arrival to the completion of the reply’s Send; errors are the calls answered with a failure (untimed).</p>
<div class="wide"><table>
<thead><tr><th class="n">#</th><th>proc</th><th>class</th><th class="n">calls</th><th class="n">p50 µs</th><th class="n">p99 µs</th><th class="n">max µs</th><th class="n">errors</th></tr></thead>
<tbody>
<tr><td class="n">1</td><td>CB_NULL</td><td>short</td><td class="n">1</td><td class="n">–</td><td class="n">–</td><td class="n">0.50</td><td class="n">0</td></tr>
<tr><td class="n">1</td><td>CB_COMPOUND</td><td>short</td><td class="n">2001</td><td class="n">9.00</td><td class="n">15.86</td><td class="n">15.99</td><td class="n">1</td></tr>
</tbody>
</table></div>

<h3 id="run-1-recalls">Delegation recalls</h3>
<p class="foot">Per delegation recalled and returned, in microseconds: recall, from sending the conflicting OPEN to CB_RECALL’s arrival; delegreturn, DELEGRETURN’s round trip; conflict, from first sending the conflicting OPEN to its success. Not granted: OPENs that asked for a read delegation and got none; retries: conflicting OPENs answered NFS4ERR_DELAY.</p>
<div class="wide"><table>
<thead><tr><th class="n">#</th><th>latency</th><th class="n">count</th><th class="n">p50 µs</th><th class="n">p90 µs</th><th class="n">p99 µs</th><th class="n">max µs</th><th class="n">not granted</th><th class="n">retries</th></tr></thead>
<tbody>
<tr><td class="n">1</td><td>recall</td><td class="n">200</td><td class="n">30.99</td><td class="n">31.79</td><td class="n">–</td><td class="n">31.99</td><td class="n">1</td><td class="n">199</td></tr>
<tr><td class="n">1</td><td>delegreturn</td><td class="n">200</td><td class="n">16.99</td><td class="n">18.59</td><td class="n">–</td><td class="n">18.98</td><td class="n"></td><td class="n"></td></tr>
<tr><td class="n">1</td><td>conflict</td><td class="n">200</td><td class="n">94.97</td><td class="n">99.01</td><td class="n">–</td><td class="n">99.95</td><td class="n"></td><td class="n"></td></tr>
</tbody>
</table></div>

`
	if got := section(t, html, `<h3 id="run-1-callbacks">`, `<h3 id="run-1-negotiated">`); got != wantHTML {
		t.Errorf("html:\n%s\nwant:\n%s", got, wantHTML)
	}
	for _, link := range []string{`<a href="#run-1-callbacks">callbacks</a>`, `<a href="#run-1-recalls">delegation recalls</a>`} {
		if !strings.Contains(html, link) {
			t.Errorf("the contents lack %s", link)
		}
	}
	// Without them, neither section nor link.
	hp, mp, err = Write([]*results.Run{s}, filepath.Join(dir, "plain"), Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{hp, mp} {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "allbacks") || strings.Contains(string(b), "recalls") {
			t.Errorf("%s shows callbacks or recalls of a run without them", p)
		}
	}
}

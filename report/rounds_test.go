package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// roundsOf is the points of r measured in n rounds, as --repeat writes them; the last round
// lacks the last point (cut short).
func roundsOf(t *testing.T, r *results.Run, n int) *results.Run {
	t.Helper()
	c := clone(r)
	c.Points = nil
	for k := 1; k <= n; k++ {
		for i, p := range r.Points {
			if k == n && i == len(r.Points)-1 {
				break
			}
			p.Round = k
			c.Points = append(c.Points, p)
		}
	}
	if _, err := results.Marshal(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The page says how many rounds each point has (in the Runs table, and per row of the
// summary), how the charts draw them, and which files repeat one setup.
func TestRoundsShown(t *testing.T) {
	s, x := testRuns(t)
	r := roundsOf(t, s, 3)
	dir := t.TempDir()
	h, m, err := Write([]*results.Run{r, x, clone(x)}, dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	html, md := string(read(t, h)), string(read(t, m))
	for _, want := range []*regexp.Regexp{
		// The Runs table: 2 to 3 rounds for the repeated run (its last point was cut), 1 for the others.
		regexp.MustCompile(`<th class="n">rounds</th>`),
		regexp.MustCompile(`<td class="n">` + strconv.Itoa(len(r.Points)) + `</td><td class="n">2–3</td>`),
		regexp.MustCompile(`<td class="n">` + strconv.Itoa(len(x.Points)) + `</td><td class="n">1</td>`),
		// The summary's round column, on the repeated run only.
		regexp.MustCompile(`<tr><td class="n">1</td><td class="n">1</td><td>ECHO</td>`),
		regexp.MustCompile(`<td class="n">` + strconv.Itoa(len(r.Points)) + `</td><td class="n">3</td><td>ECHO</td>`),
		regexp.MustCompile(`drawn as the median of its rounds, with their min-max range`),
		regexp.MustCompile(`runs 2, 3 repeat one setup`),
	} {
		if !want.MatchString(html) {
			t.Errorf("html lacks %s", want)
		}
	}
	for _, want := range []string{"| points | rounds | status |", "| 2–3 |", "drawn as the median of its rounds", "runs 2, 3 repeat one setup"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Count(html, `<th class="n">round</th>`) != 1 {
		t.Errorf("want a round column in one summary (the repeated run's)")
	}
}

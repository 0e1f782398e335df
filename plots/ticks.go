package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// sizeTicks marks powers of two on a log axis of byte sizes: 64, 256, 1K, 4K, 64K, 1M. When
// there are too many to label, every second (or fifth, tenth) octave is labelled, at even
// exponents so that 1K and 1M keep their labels, and the others become minor ticks.
func sizeTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log2(lo)+1e-9)), int(math.Ceil(math.Log2(hi)-1e-9))
	stride := 1
	for _, st := range []int{1, 2, 5, 10, 20} {
		stride = st
		if (e1-e0)/st+1 <= 9 {
			break
		}
	}
	var ts []plot.Tick
	for e := e0; e <= e1; e++ {
		v := math.Ldexp(1, e)
		if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
			continue
		}
		t := plot.Tick{Value: v}
		if e%stride == 0 {
			t.Label = bytesLabel(int(v))
			if e < 0 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// log2Range is the range of a log2 axis of sizes lo..hi: whole octaves around the data, one
// octave either side of a single value.
func log2Range(lo, hi float64) (float64, float64) {
	a, b := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	if a == b {
		a, b = a-1, b+1
	}
	return a, b
}

// logTicks labels a log axis at 1, 2 and 5 times powers of ten when the range spans up to 2.5
// decades and at powers of ten beyond that, with the other integer multiples as minor ticks.
// label formats a tick value.
func logTicks(label func(float64) string) plot.TickerFunc {
	return func(lo, hi float64) []plot.Tick {
		if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
			return linearTicks(label)(lo, hi)
		}
		d0, d1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
		major := func(m int) bool { return m == 1 || m == 2 || m == 5 }
		if math.Log10(hi/lo) > 2.5 {
			major = func(m int) bool { return m == 1 }
		}
		for _, try := range []func(int) bool{major, func(int) bool { return true }} {
			var ts []plot.Tick
			labelled := 0
			for d := d0; d <= d1; d++ {
				for m := 1; m <= 9; m++ {
					v := float64(m) * math.Pow(10, float64(d))
					if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
						continue
					}
					t := plot.Tick{Value: v}
					if try(m) {
						t.Label = label(v)
						labelled++
					}
					ts = append(ts, t)
				}
			}
			if labelled >= 2 {
				return ts
			}
		}
		// Less than an integer step wide: label it linearly.
		return linearTicks(label)(lo, hi)
	}
}

// linearTicks labels a linear axis at round steps (1, 2 or 5 times a power of ten) giving 4 to
// 10 labels, with minor ticks at fifths (or halves) of a step: gonum's default labels too few
// for a reader to interpolate on a tall axis.
func linearTicks(label func(float64) string) plot.TickerFunc {
	return func(lo, hi float64) []plot.Tick {
		if !(hi > lo) || math.IsInf(hi-lo, 0) || math.IsNaN(hi-lo) {
			return []plot.Tick{{Value: lo, Label: label(lo)}}
		}
		step := step125((hi-lo)/8, true)
		minor := step / 5
		if m := step / math.Pow(10, math.Floor(math.Log10(step))); m == 2 {
			minor = step / 2
		}
		var ts []plot.Tick
		first := math.Ceil(lo/minor-1e-9) * minor
		for i := 0; ; i++ {
			v := first + float64(i)*minor
			if v > hi+minor*1e-6 || i > 1000 {
				break
			}
			t := plot.Tick{Value: v}
			if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
				t.Value = math.Round(r) * step
				t.Label = label(t.Value)
			}
			ts = append(ts, t)
		}
		return ts
	}
}

// percentileTicks label the spectrum's x axis, 1/(1-p), at 0%, 90%, 99%, 99.9%, ... as
// HdrHistogram's plots do, and on a short axis (up to 2.5 decades) also at 2 and 5 times
// those (50%, 80%, 95%, 98%, ...); the other integer multiples are minor ticks.
func percentileTicks(lo, hi float64) []plot.Tick {
	labelled := func(m int) bool { return m == 1 }
	if hi > 0 && math.Log10(hi/math.Max(lo, 1)) <= 2.5 {
		labelled = func(m int) bool { return m == 1 || m == 2 || m == 5 }
	}
	var ts []plot.Tick
	for k := 0; k <= 9; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(k))
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled(m) {
				t.Label = percentileLabel(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// percentileLabel is the percentile p whose 1/(1-p) is v: 0%, 50%, 90%, 99.9%.
func percentileLabel(v float64) string {
	p := 100 - 100/v
	return strconv.FormatFloat(math.Round(p*1e6)/1e6, 'f', -1, 64) + "%"
}

// Every log axis is drawn as a linear axis of the logarithms, with ticks placed at the
// logarithms of round values: gonum's LogScale places an axis label's glyph box at the
// arithmetic middle of the range, which pads the plot with a wide empty margin.

// expTicks labels an axis whose coordinates are log10 of the values at the values logTicks
// would choose.
func expTicks(label func(float64) string) plot.TickerFunc {
	return logged(logTicks(label), 10)
}

// logged adapts a ticker of values to an axis of their logarithms in base b.
func logged(t plot.Ticker, b float64) plot.TickerFunc {
	return func(lo, hi float64) []plot.Tick {
		ts := t.Ticks(math.Pow(b, lo), math.Pow(b, hi))
		for i := range ts {
			ts[i].Value = math.Log(ts[i].Value) / math.Log(b)
		}
		return ts
	}
}

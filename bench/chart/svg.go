package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// palette is Okabe and Ito's colour-blind-safe palette, yellow last for its low contrast
// on white.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"}

// Layout, in pixels.
const (
	pad       = 12 // outer margin
	barH      = 14 // height of one bar
	barGap    = 2  // between the bars of a group
	groupGap  = 14 // between groups
	labelSize = 12 // workload labels, legend, ticks
	valueSize = 10 // value labels on bars
)

type options struct {
	title, metric string
	log           bool
	width         int
}

// textWidth estimates the width of s in a sans-serif font of the given size from rough
// character classes (about DejaVu Sans, wider than Helvetica), as the font is unknown.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("ijl.,:;'|!", r):
			w += 0.3
		case strings.ContainsRune("ftr-()[] ", r):
			w += 0.4
		case r == 'm' || r == 'w':
			w += 0.95
		case r == 'M' || r == 'W':
			w += 1
		case unicode.IsUpper(r):
			w += 0.72
		default:
			w += 0.62
		}
	}
	return w * size
}

// axis maps values to x coordinates, linearly or by log10, and lists its ticks.
type axis struct {
	lo, hi, x0, x1 float64
	log            bool
	ticks          []float64
}

func (a axis) x(v float64) float64 {
	if a.log {
		return a.x0 + (math.Log10(v)-math.Log10(a.lo))/(math.Log10(a.hi)-math.Log10(a.lo))*(a.x1-a.x0)
	}
	return a.x0 + (v-a.lo)/(a.hi-a.lo)*(a.x1-a.x0)
}

// newAxis spans the data's [vmin, vmax] over [x0, x1]: from zero to a round maximum for a
// linear axis, between round values around the data for a log axis.
func newAxis(vmin, vmax, x0, x1 float64, log bool) axis {
	a := axis{x0: x0, x1: x1, log: log}
	if log {
		// From 1, 2 or 5 times a power of ten below the data to one above it, leaving the
		// smallest bar at least a sixth of a decade long.
		a.lo, a.hi = logStep(vmin/1.5, false), logStep(vmax, true)
		if a.hi <= a.lo {
			a.hi = logStep(a.lo*1.01, true)
		}
		decades := math.Log10(a.hi / a.lo)
		for e := math.Floor(math.Log10(a.lo)); e <= math.Ceil(math.Log10(a.hi)); e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if (m == 1 || decades <= 4) && v >= a.lo*0.999 && v <= a.hi*1.001 { // 2 and 5 when there is room
					a.ticks = append(a.ticks, v)
				}
			}
		}
		return a
	}
	vmin, vmax = math.Min(vmin, 0), math.Max(vmax, 0)
	if vmax == vmin {
		vmax = vmin + 1
	}
	step := niceStep((vmax - vmin) / math.Max(2, (x1-x0)/90))
	lo, hi := math.Floor(vmin/step), math.Ceil(vmax/step)
	a.lo, a.hi = lo*step, hi*step
	for i := lo; i <= hi; i++ {
		a.ticks = append(a.ticks, i*step)
	}
	return a
}

// logStep rounds x > 0 down (or up) to 1, 2 or 5 times a power of ten.
func logStep(x float64, up bool) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, m := range steps {
			if m*p >= x*0.999 {
				return m * p
			}
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i]*p <= x*1.001 {
			return steps[i] * p
		}
	}
	return p
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch f := x / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

// compact formats v with three significant digits and a k, M or G suffix: 12.3k, 1.52, 0.83.
func compact(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-2)
	v = math.Round(v/p) * p
	suffix := ""
	for _, u := range []struct {
		d float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.d {
			v, suffix = v/u.d, u.s
			break
		}
	}
	s := strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(v)))), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return sign + s + suffix
}

// num formats a coordinate.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// render draws t as a grouped horizontal bar chart.
func render(w io.Writer, t *table, o options) error {
	// Horizontal space: workload labels | plot | value labels.
	left := 0.0
	for _, wl := range t.workloads {
		left = math.Max(left, textWidth(wl, labelSize))
	}
	left += pad + 10
	vmin, vmax := math.Inf(1), math.Inf(-1)
	right := 0.0
	for _, c := range t.cells {
		vmin, vmax = math.Min(vmin, c.min), math.Max(vmax, c.max)
		right = math.Max(right, textWidth(compact(c.median), valueSize))
	}
	right = math.Max(right+6, 24) + pad // room for a value label, or half a tick label
	W := float64(o.width)
	if W-left-right < 100 {
		return fmt.Errorf("-width %d is too narrow for these labels", o.width)
	}

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	esc := html.EscapeString

	// Title and legend, wrapping the legend when it is wider than the chart.
	y := 26.0
	title := fmt.Sprintf(`<text x="%s" y="%s" font-size="16" font-weight="bold">%s</text>`+"\n", num(pad), num(y), esc(o.title))
	var legend strings.Builder
	lx, ly := float64(pad), y+22
	for i, s := range t.servers {
		iw := 18 + textWidth(s, labelSize) + 20
		if lx > pad && lx+iw > W-pad {
			lx, ly = pad, ly+18
		}
		fmt.Fprintf(&legend, `<rect class="swatch" x="%s" y="%s" width="12" height="12" fill="%s"/>`, num(lx), num(ly-10), palette[i%len(palette)])
		fmt.Fprintf(&legend, `<text x="%s" y="%s" font-size="%d">%s</text>`+"\n", num(lx+18), num(ly), labelSize, esc(s))
		lx += iw
	}

	// Vertical space: one group per workload, one bar slot per server.
	top := ly + 16
	groupH := float64(len(t.servers)*barH + (len(t.servers)-1)*barGap)
	bottom := top + float64(len(t.workloads))*(groupH+groupGap)
	H := bottom + 48
	ax := newAxis(vmin, vmax, left, W-right, o.log)

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%s" viewBox="0 0 %d %s" font-family="sans-serif" fill="#222">`+"\n", o.width, num(H), o.width, num(H))
	p(`<rect class="background" width="100%%" height="100%%" fill="#fff"/>` + "\n")
	b.WriteString(title)
	b.WriteString(legend.String())

	// Alternate bands behind the groups, then the grid.
	for i := range t.workloads {
		if i%2 == 0 {
			gy := top + float64(i)*(groupH+groupGap)
			p(`<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="#f3f3f3"/>`+"\n", num(pad), num(gy), num(W-2*pad), num(groupH+groupGap))
		}
	}
	for _, v := range ax.ticks {
		x := num(ax.x(v))
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ccc" stroke-width="1"/>`+"\n", x, num(top), x, num(bottom))
	}

	// Bars, whiskers and value labels.
	for i, wl := range t.workloads {
		gy := top + float64(i)*(groupH+groupGap) + groupGap/2
		p(`<text x="%s" y="%s" font-size="%d" text-anchor="end">%s</text>`+"\n", num(left-8), num(gy+groupH/2+4), labelSize, esc(wl))
		for j, s := range t.servers {
			c, ok := t.cells[[2]string{wl, s}]
			if !ok {
				continue
			}
			by := gy + float64(j*(barH+barGap))
			cy := by + barH/2
			x0, xm := ax.x0, ax.x(c.median) // bars grow from the axis's left end, or from zero
			if !o.log {
				x0 = ax.x(0)
			}
			note := fmt.Sprintf("%s, %s: %s %g", wl, s, o.metric, c.median)
			if c.n > 1 {
				note = fmt.Sprintf("%s, %s: %s median %g of %d (min %g, max %g)", wl, s, o.metric, c.median, c.n, c.min, c.max)
			}
			p(`<rect class="bar" data-workload="%s" data-server="%s" data-value="%s" x="%s" y="%s" width="%s" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				esc(wl), esc(s), strconv.FormatFloat(c.median, 'g', -1, 64), num(math.Min(x0, xm)), num(by), num(math.Abs(xm-x0)), barH, palette[j%len(palette)], esc(note))
			end := math.Max(x0, xm)
			if c.n > 1 && c.max > c.min {
				a, z := ax.x(c.min), ax.x(c.max)
				p(`<path class="whisker" d="M%s %sH%sM%s %sV%sM%s %sV%s" stroke="#222" stroke-width="1" fill="none"/>`+"\n",
					num(a), num(cy), num(z), num(a), num(cy-4), num(cy+4), num(z), num(cy-4), num(cy+4))
				end = math.Max(end, z)
			}
			p(`<text x="%s" y="%s" font-size="%d">%s</text>`+"\n", num(end+4), num(cy+3.5), valueSize, compact(c.median))
		}
	}

	// Value axis along the bottom.
	p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1"/>`+"\n", num(ax.x0), num(bottom), num(ax.x1), num(bottom))
	lastRight := math.Inf(-1)
	for _, v := range ax.ticks {
		x, label := ax.x(v), compact(v)
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1"/>`+"\n", num(x), num(bottom), num(x), num(bottom+5))
		if half := textWidth(label, labelSize-1) / 2; x-half > lastRight+6 { // skip labels that would overlap
			p(`<text class="tick" x="%s" y="%s" font-size="%d" text-anchor="middle">%s</text>`+"\n", num(x), num(bottom+18), labelSize-1, label)
			lastRight = x + half
		}
	}
	caption := o.metric
	if o.log {
		caption += " (log scale)"
	}
	p(`<text x="%s" y="%s" font-size="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", num((ax.x0+ax.x1)/2), num(bottom+36), labelSize-1, esc(caption))
	p("</svg>\n")

	_, err := io.WriteString(w, b.String())
	return err
}

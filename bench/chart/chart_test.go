package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const input = `{"workload":"read","server":"partita","ops_per_s":100,"p99_ms":0.3}
{"workload":"read","server":"partita","ops_per_s":900,"p99_ms":2}
{"workload":"read","server":"partita","ops_per_s":200,"p99_ms":0.4}
{"workload":"read","url":"http://127.0.0.1:8081","ops_per_s":50,"p99_ms":3}
{"workload":"read","compare":"B/A","ops_per_s":9999,"ops_per_s_B_over_A":1.5}
{"compare":"B/A","ops_per_s_B_over_A":1.5}
[1,2,3]
"not an object"

{"workload":"create","server":"partita","ops_per_s":40,"p99_ms":30}
{"workload":"create","server":"cosmium-mem","ops_per_s":10,"p99_ms":300}
{"workload":"create","server":"cosmium-mem","p50_ms":1}
`

// bar is one <rect class="bar"> of a rendered chart.
type bar struct {
	workload, server string
	value, width     float64
}

// rendered is what a test reads back from a chart.
type rendered struct {
	bars     []bar
	ticks    []string // tick labels
	whiskers int
}

// chart runs the command on the JSON lines jsonl with the given flags and reads the SVG back.
func chart(t *testing.T, jsonl string, args ...string) rendered {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.svg")
	if err := os.WriteFile(in, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if err := run(append([]string{"-in", in, "-out", out}, args...), &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	// Parsing the whole document checks that it is well-formed XML.
	var r rendered
	inTick := false
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range tok.Attr {
				a[at.Name.Local] = at.Value
			}
			if tok.Name.Local == "rect" && a["class"] == "bar" {
				v, _ := strconv.ParseFloat(a["data-value"], 64)
				w, _ := strconv.ParseFloat(a["width"], 64)
				r.bars = append(r.bars, bar{a["data-workload"], a["data-server"], v, w})
			}
			if a["class"] == "whisker" {
				r.whiskers++
			}
			inTick = tok.Name.Local == "text" && a["class"] == "tick"
		case xml.CharData:
			if inTick {
				r.ticks = append(r.ticks, string(tok))
			}
		case xml.EndElement:
			inTick = false
		}
	}
	return r
}

func TestChart(t *testing.T) {
	r := chart(t, input, "-metric", "ops_per_s", "-title", "Throughput <ops/s> & more")
	bars := r.bars
	want := []bar{ // groups in order of appearance; ratio lines and lines without the metric skipped
		{workload: "read", server: "partita", value: 200}, // the median of 100, 900, 200, not the mean
		{workload: "read", server: "http://127.0.0.1:8081", value: 50},
		{workload: "create", server: "partita", value: 40},
		{workload: "create", server: "cosmium-mem", value: 10},
	}
	if len(bars) != len(want) {
		t.Fatalf("got %d bars %+v, want %d", len(bars), bars, len(want))
	}
	for i, w := range want {
		if b := bars[i]; b.workload != w.workload || b.server != w.server || b.value != w.value {
			t.Errorf("bar %d = %+v, want %+v", i, b, w)
		}
	}
	// Linear bars are proportional to their values.
	if q := bars[0].width / bars[1].width; math.Abs(q-4) > 0.05 {
		t.Errorf("width ratio of 200 to 50 = %.3f, want 4", q)
	}
	if r.whiskers != 1 { // only read/partita has several rounds
		t.Errorf("%d whiskers, want 1", r.whiskers)
	}
}

func TestChartSelect(t *testing.T) {
	bars := chart(t, input, "-workloads", "create,read,nosuch", "-servers", "cosmium-mem,partita").bars
	var got []string
	for _, b := range bars {
		got = append(got, b.workload+"/"+b.server)
	}
	if s := strings.Join(got, " "); s != "create/cosmium-mem create/partita read/partita" {
		t.Errorf("bars = %s", s)
	}
}

func TestChartLog(t *testing.T) {
	r := chart(t, input, "-metric", "p99_ms", "-log")
	bars := r.bars
	// Medians 0.4, 3, 30 and 300: bars end at log10(value), so every decade takes the same
	// width.
	if len(bars) != 4 {
		t.Fatalf("got %d bars %+v, want 4", len(bars), bars)
	}
	if bars[0].value != 0.4 {
		t.Errorf("read/partita = %g, want the median 0.4", bars[0].value)
	}
	perDecade := bars[3].width - bars[2].width // 300 and 30
	if perDecade < 50 {
		t.Fatalf("a decade is %.1f px wide; bars %+v", perDecade, bars)
	}
	for i, b := range bars {
		want := bars[3].width - perDecade*math.Log10(300/b.value)
		if math.Abs(b.width-want) > 0.5 {
			t.Errorf("bar %d %+v: width %.1f, want %.1f", i, b, b.width, want)
		}
	}
	for _, want := range []string{"0.2", "0.5", "1", "2", "10", "100", "500"} {
		if !slices.Contains(r.ticks, want) {
			t.Errorf("ticks %q lack %s", r.ticks, want)
		}
	}
}

func TestChartErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-in", filepath.Join(dir, "missing.jsonl")},
		{"-in", in, "-metric", "nosuch"},
		{"-in", in, "-workloads", "nosuch"},
		{},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

func TestCompact(t *testing.T) {
	for v, want := range map[float64]string{
		12345: "12.3k", 1.5234: "1.52", 0.83: "0.83", 0.001: "0.001", 0: "0", 999.7: "1k",
		1000: "1k", 2.5e6: "2.5M", 123: "123", 47.25: "47.3", -1500: "-1.5k",
	} {
		if got := compact(v); got != want {
			t.Errorf("compact(%g) = %s, want %s", v, got, want)
		}
	}
}

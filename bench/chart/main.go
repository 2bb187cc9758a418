// Command chart renders benchmark results, as written by "go run ./bench -json", into a
// self-contained SVG bar chart for docs/benchmarks.md.
//
// The input holds one JSON object a line. Each object with a "workload" field is one
// measurement: the bar's server is its "server" field (or, when that is missing or empty,
// its "url"), and its value is the numeric field named by -metric. Other lines, such as the
// ratio lines of a comparison (they have a "compare" field), are skipped. When a (workload,
// server) pair is measured several times, the bar shows the median and a thin whisker spans
// the minimum to the maximum.
//
// The chart has one group of horizontal bars per workload, in the order the workloads first
// appear in the input, and one bar per server, coloured by the order the servers first
// appear. -workloads and -servers (comma-separated) select and order them instead.
//
// Examples:
//
//	go run ./bench/chart -in results.jsonl -out docs/benchmarks-throughput.svg -metric ops_per_s -title "Throughput (ops/s, higher is better)"
//	go run ./bench/chart -in results.jsonl -out docs/benchmarks-p99.svg -metric p99_ms -title "p99 latency (ms, lower is better)" -log
//
// Flags:
//
//	-in FILE         JSON lines to read (required)
//	-out FILE        SVG to write; standard output when empty
//	-metric NAME     numeric field to plot (default ops_per_s)
//	-title TEXT      chart title (default: the metric)
//	-log             log10 value axis; values <= 0 are dropped with a warning
//	-workloads LIST  comma-separated workloads to show, in this order
//	-servers LIST    comma-separated servers to show, in this order
//	-width N         width of the SVG in pixels (default 900); the height follows the data
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	err := run(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("chart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		in        = fs.String("in", "", "JSON lines file of benchmark results (required)")
		out       = fs.String("out", "", "SVG file to write (default standard output)")
		metric    = fs.String("metric", "ops_per_s", "numeric JSON field to plot")
		title     = fs.String("title", "", "chart title (default: the metric)")
		logScale  = fs.Bool("log", false, "log10 value axis")
		workloads = fs.String("workloads", "", "comma-separated workloads to show, in this order")
		servers   = fs.String("servers", "", "comma-separated servers to show, in this order")
		width     = fs.Int("width", 900, "width of the SVG in pixels")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *in == "" {
		return errors.New("-in is required")
	}
	if *title == "" {
		*title = *metric
	}

	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	samples, err := readSamples(f, *metric, stderr)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if *logScale {
		samples = positive(samples, stderr)
	}
	t, err := aggregate(samples, splitList(*workloads), splitList(*servers), stderr)
	if err != nil {
		return fmt.Errorf("%s: metric %q: %w", *in, *metric, err)
	}

	var buf bytes.Buffer
	if err := render(&buf, t, options{title: *title, metric: *metric, log: *logScale, width: *width}); err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}

// sample is one measurement of the plotted metric.
type sample struct {
	workload, server string
	value            float64
}

// readSamples returns the value of metric on every line that is a JSON object with a
// "workload" field and no "compare" field. Lines without a numeric metric are skipped;
// lines that are not JSON are skipped with a warning.
func readSamples(r io.Reader, metric string, warn io.Writer) ([]sample, error) {
	var samples []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			fmt.Fprintf(warn, "chart: line %d is not JSON, skipped: %v\n", n, err)
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := m["compare"]; ok {
			continue
		}
		wl, _ := m["workload"].(string)
		val, ok := m[metric].(float64)
		if wl == "" || !ok {
			continue
		}
		server, _ := m["server"].(string)
		if server == "" {
			server, _ = m["url"].(string)
		}
		if server == "" {
			server = "unknown"
		}
		samples = append(samples, sample{wl, server, val})
	}
	return samples, sc.Err()
}

// positive drops the samples a log axis cannot show.
func positive(samples []sample, warn io.Writer) []sample {
	kept := samples[:0]
	for _, s := range samples {
		if s.value > 0 {
			kept = append(kept, s)
		} else {
			fmt.Fprintf(warn, "chart: %s/%s: value %g cannot be drawn on a log axis, dropped\n", s.workload, s.server, s.value)
		}
	}
	return kept
}

// cell summarises the samples of one (workload, server) pair.
type cell struct {
	median, min, max float64
	n                int
}

// table is what the chart draws: groups of workloads, a bar per server.
type table struct {
	workloads, servers []string
	cells              map[[2]string]cell // by {workload, server}; absent when not measured
}

// aggregate groups samples by (workload, server). Workloads and servers keep the order of
// their first appearance unless the want lists are given, which select and order them.
func aggregate(samples []sample, wantWorkloads, wantServers []string, warn io.Writer) (*table, error) {
	values := map[[2]string][]float64{}
	var workloads, servers []string
	seenW, seenS := map[string]bool{}, map[string]bool{}
	for _, s := range samples {
		if !seenW[s.workload] {
			seenW[s.workload] = true
			workloads = append(workloads, s.workload)
		}
		if !seenS[s.server] {
			seenS[s.server] = true
			servers = append(servers, s.server)
		}
		k := [2]string{s.workload, s.server}
		values[k] = append(values[k], s.value)
	}
	if wantWorkloads != nil {
		workloads = pick(wantWorkloads, seenW, "workload", warn)
	}
	if wantServers != nil {
		servers = pick(wantServers, seenS, "server", warn)
	}

	t := &table{cells: map[[2]string]cell{}}
	usedW, usedS := map[string]bool{}, map[string]bool{}
	for _, w := range workloads {
		for _, s := range servers {
			v := values[[2]string{w, s}]
			if len(v) == 0 {
				continue
			}
			sort.Float64s(v)
			c := cell{min: v[0], max: v[len(v)-1], n: len(v), median: v[len(v)/2]}
			if len(v)%2 == 0 {
				c.median = (v[len(v)/2-1] + v[len(v)/2]) / 2
			}
			t.cells[[2]string{w, s}] = c
			usedW[w], usedS[s] = true, true
		}
	}
	// Keep only the workloads and servers that have at least one bar left.
	for _, w := range workloads {
		if usedW[w] {
			t.workloads = append(t.workloads, w)
		}
	}
	for _, s := range servers {
		if usedS[s] {
			t.servers = append(t.servers, s)
		}
	}
	if len(t.cells) == 0 {
		return nil, errors.New("no data")
	}
	return t, nil
}

// pick returns the wanted names that are present, warning about the others.
func pick(want []string, present map[string]bool, what string, warn io.Writer) []string {
	var out []string
	for _, w := range want {
		if present[w] {
			out = append(out, w)
		} else {
			fmt.Fprintf(warn, "chart: no data for %s %q\n", what, w)
		}
	}
	return out
}

func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// textLine renders a summary as one line.
func textLine(s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %-3s %-14s ops/s=%-9.1f p50=%.2fms p90=%.2fms p99=%.2fms p99.9=%.2fms RU/s=%.1f (%.2f/op) errors=%d (429=%d, throttled=%d)",
		s.Workload, s.Mode, s.Server, s.OpsPerSec, s.P50, s.P90, s.P99, s.P999, s.RUPerSec, s.RUPerOp, s.Errors, s.Err429, s.Throttled)
	if s.CPU > 0 || s.RSSPeakMB > 0 {
		fmt.Fprintf(&b, " cpu=%.2fs (%.3fms/op) rss=%.1fMB rss_peak=%.1fMB", s.CPU, cpuPerOp(s), s.RSSMB, s.RSSPeakMB)
	}
	return b.String()
}

func cpuPerOp(s Summary) float64 {
	if s.Ops == 0 {
		return 0
	}
	return s.CPU * 1000 / float64(s.Ops)
}

// Ratio compares endpoint B to endpoint A; every figure is oriented so that > 1 means B is
// better or larger: throughput and resource use as B/A, latencies as A/B.
type Ratio struct {
	Workload  string  `json:"workload"`
	Compare   string  `json:"compare"`
	OpsPerSec float64 `json:"ops_per_s_B_over_A"`
	P50       float64 `json:"p50_A_over_B"`
	P90       float64 `json:"p90_A_over_B"`
	P99       float64 `json:"p99_A_over_B"`
	P999      float64 `json:"p999_A_over_B"`
	RUPerSec  float64 `json:"ru_per_s_B_over_A"`
	RUPerOp   float64 `json:"ru_per_op_B_over_A"`
	CPU       float64 `json:"server_cpu_B_over_A,omitempty"`
	CPUPerOp  float64 `json:"server_cpu_per_op_B_over_A,omitempty"`
	RSSPeak   float64 `json:"server_rss_peak_B_over_A,omitempty"`
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ratio(a, b Summary) Ratio {
	return Ratio{Workload: a.Workload, Compare: "B/A",
		OpsPerSec: div(b.OpsPerSec, a.OpsPerSec),
		P50:       div(a.P50, b.P50), P90: div(a.P90, b.P90), P99: div(a.P99, b.P99), P999: div(a.P999, b.P999),
		RUPerSec: div(b.RUPerSec, a.RUPerSec), RUPerOp: div(b.RUPerOp, a.RUPerOp),
		CPU: div(b.CPU, a.CPU), CPUPerOp: div(cpuPerOp(b), cpuPerOp(a)), RSSPeak: div(b.RSSPeakMB, a.RSSPeakMB)}
}

func ratioLine(r Ratio) string {
	s := fmt.Sprintf("%-11s B/A      ops/s x%.3f  latency A/B: p50 x%.3f p90 x%.3f p99 x%.3f p99.9 x%.3f  RU/s x%.3f RU/op x%.3f",
		r.Workload, r.OpsPerSec, r.P50, r.P90, r.P99, r.P999, r.RUPerSec, r.RUPerOp)
	if r.CPU != 0 || r.RSSPeak != 0 {
		s += fmt.Sprintf("  cpu x%.3f cpu/op x%.3f rss_peak x%.3f", r.CPU, r.CPUPerOp, r.RSSPeak)
	}
	return s
}

func errorDetail(w io.Writer, name, ep string, r *Recorder) {
	if r.Errors == 0 {
		return
	}
	codes := make([]int, 0, len(r.ErrByCode))
	for c := range r.ErrByCode {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d:%d", c, r.ErrByCode[c]))
	}
	fmt.Fprintf(w, "  %s %s errors by status (0 = no HTTP status) %s; first: %v\n", name, ep, strings.Join(parts, " "), firstLine(r.FirstErr))
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// jsonOut appends JSON lines to a file; a nil jsonOut writes nothing.
type jsonOut struct{ f *os.File }

func openJSON(path string) (*jsonOut, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &jsonOut{f}, nil
}

func (j *jsonOut) write(v any) error {
	if j == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = j.f.Write(append(b, '\n'))
	return err
}

func (j *jsonOut) close() error {
	if j == nil {
		return nil
	}
	return j.f.Close()
}

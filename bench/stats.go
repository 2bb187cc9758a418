package main

import (
	"slices"
	"time"
)

// Recorder collects one worker's measurements; recorders are merged after a run, so
// workers never share one.
type Recorder struct {
	Lat       []time.Duration
	Charge    float64
	Errors    int64
	Err429    int64 // requests that failed with 429 after retries
	FirstErr  error
	ErrByCode map[int]int64
}

func (r *Recorder) Add(d time.Duration, charge float64, err error) {
	r.Charge += charge
	if err != nil {
		r.Errors++
		code := statusOf(err)
		if code == 429 {
			r.Err429++
		}
		if r.ErrByCode == nil {
			r.ErrByCode = map[int]int64{}
		}
		r.ErrByCode[code]++
		if r.FirstErr == nil {
			r.FirstErr = err
		}
		return
	}
	r.Lat = append(r.Lat, d)
}

func (r *Recorder) Merge(o *Recorder) {
	r.Lat = append(r.Lat, o.Lat...)
	r.Charge += o.Charge
	r.Errors += o.Errors
	r.Err429 += o.Err429
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
	for k, v := range o.ErrByCode {
		if r.ErrByCode == nil {
			r.ErrByCode = map[int]int64{}
		}
		r.ErrByCode[k] += v
	}
}

// Summary is the figures of one workload run (or of several rounds combined).
type Summary struct {
	Workload  string  `json:"workload"`
	Server    string  `json:"server"`   // -label or -compare-label
	Endpoint  string  `json:"endpoint"` // A, or B in a comparison
	URL       string  `json:"url"`
	Rounds    int     `json:"rounds"`
	Mode      string  `json:"mode"`
	Conc      int     `json:"concurrency"`
	Rate      float64 `json:"rate,omitempty"` // the paced rate, if any
	Index     string  `json:"index_policy"`   // -index-policy: default or none
	Ops       int64   `json:"ops"`
	Elapsed   float64 `json:"elapsed_s"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50       float64 `json:"p50_ms"`
	P90       float64 `json:"p90_ms"`
	P99       float64 `json:"p99_ms"`
	P999      float64 `json:"p999_ms"`
	RUPerSec  float64 `json:"ru_per_s"`
	RUPerOp   float64 `json:"ru_per_op"`
	Errors    int64   `json:"errors"`
	Err429    int64   `json:"errors_429"`
	Throttled int64   `json:"throttled_responses"` // 429s seen, retried ones included
	CPU       float64 `json:"server_cpu_s,omitempty"`
	RSSPeakMB float64 `json:"server_rss_peak_mb,omitempty"`
	RSSMB     float64 `json:"server_rss_mb,omitempty"` // at the end of the run
	HWMMB     float64 `json:"server_vmhwm_mb,omitempty"`
	FirstErr  string  `json:"first_error,omitempty"`
}

// summarize computes ops/s, exact percentiles from the sorted latencies, and RU/s.
func summarize(r *Recorder, elapsed time.Duration) Summary {
	slices.Sort(r.Lat)
	pct := func(p float64) float64 {
		if len(r.Lat) == 0 {
			return 0
		}
		i := int(p * float64(len(r.Lat)))
		if i >= len(r.Lat) {
			i = len(r.Lat) - 1
		}
		return float64(r.Lat[i].Microseconds()) / 1000
	}
	s := Summary{Ops: int64(len(r.Lat)), Elapsed: elapsed.Seconds(), Errors: r.Errors, Err429: r.Err429,
		P50: pct(0.50), P90: pct(0.90), P99: pct(0.99), P999: pct(0.999)}
	if sec := elapsed.Seconds(); sec > 0 {
		s.OpsPerSec = float64(s.Ops) / sec
		s.RUPerSec = r.Charge / sec
	}
	if n := s.Ops + s.Errors; n > 0 {
		s.RUPerOp = r.Charge / float64(n)
	}
	if r.FirstErr != nil {
		s.FirstErr = r.FirstErr.Error()
		if len(s.FirstErr) > 300 {
			s.FirstErr = s.FirstErr[:300]
		}
	}
	return s
}

package main

import (
	"fmt"
	"github.com/partita-db/partita/bench/procfs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clkTck is USER_HZ, the unit of utime and stime in /proc/<pid>/stat; 100 on every
// mainstream Linux.
const clkTck = 100

// cpuSeconds returns user+system CPU seconds used so far by process pid.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it start at state (field 3).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / clkTck, nil
}

// ProcWatch measures a process's CPU use and peak RSS (sampled every 100 ms) over a run.
type ProcWatch struct {
	pid      int
	cpu0     float64
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	peakRSS  float64
	lastErrs error
}

// watch starts watching pid; a pid of 0 gives a nil watch whose methods do nothing.
func watch(pid int) *ProcWatch {
	if pid == 0 {
		return nil
	}
	w := &ProcWatch{pid: pid, stop: make(chan struct{})}
	w.cpu0, w.lastErrs = cpuSeconds(pid)
	w.sample()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *ProcWatch) sample() {
	rss, _, err := procfs.Memory(w.pid)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.lastErrs = err
		return
	}
	w.peakRSS = max(w.peakRSS, rss)
}

// Finish stops the sampler and fills the summary's CPU and memory figures.
func (w *ProcWatch) Finish(s *Summary) error {
	if w == nil {
		return nil
	}
	close(w.stop)
	w.wg.Wait()
	w.sample()
	cpu1, err := cpuSeconds(w.pid)
	if err != nil {
		return err
	}
	rss, hwm, _ := procfs.Memory(w.pid)
	s.CPU = cpu1 - w.cpu0
	s.RSSMB = rss / 1024
	s.RSSPeakMB = w.peakRSS / 1024
	s.HWMMB = hwm / 1024
	return w.lastErrs
}

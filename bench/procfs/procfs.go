// Package procfs reads what the benchmark programs measure of a process from Linux's /proc.
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory returns VmRSS and VmHWM (the resident set now, and its peak) of process pid, in kB.
func Memory(pid int) (rss, hwm float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, nil
}

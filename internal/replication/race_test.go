//go:build race

package replication_test

// raceEnabled: the race detector's own allocations make heap figures meaningless.
const raceEnabled = true

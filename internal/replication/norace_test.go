//go:build !race

package replication_test

const raceEnabled = false

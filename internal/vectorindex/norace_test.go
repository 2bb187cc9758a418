//go:build !race

package vectorindex

const raceEnabled = false

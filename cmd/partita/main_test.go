package main

import (
	"encoding/json"
	"os"
	"testing"
)

// TestMain lets a test run partita itself as a child process (the test binary, re-executed
// with PARTITA_TEST_ARGS set, runs main with those arguments), so that a child can be killed
// for real without building the binary.
func TestMain(m *testing.M) {
	if args := os.Getenv("PARTITA_TEST_ARGS"); args != "" {
		var a []string
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			panic(err)
		}
		os.Args = append([]string{"partita"}, a...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

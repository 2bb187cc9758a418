package cql

import "testing"

// The statements a driver prepares most: a point insert and a partition read.
const (
	benchInsert = "INSERT INTO uprofile.user (user, id, firstname, lastname, email) VALUES (?, ?, ?, ?, ?) USING TTL ?"
	benchSelect = "SELECT user, id, firstname, lastname, email FROM uprofile.user WHERE user = ? AND id >= ? ORDER BY id DESC LIMIT 100"
)

func BenchmarkParseInsert(b *testing.B) { benchParse(b, benchInsert) }

func BenchmarkParseSelect(b *testing.B) { benchParse(b, benchSelect) }

func benchParse(b *testing.B, src string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

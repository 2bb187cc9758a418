package epk_test

import (
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

var sink epk.EPK

// a 20-character string key, the common case of an id-like partition key
var benchKey = epk.Key{epk.String("3f2a9c1e-user-000042")}

func BenchmarkHashV2String(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = epk.HashV2(benchKey)
	}
}

func BenchmarkHashV1String(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = epk.HashV1(benchKey)
	}
}

func BenchmarkHashMulti3(b *testing.B) {
	k := epk.Key{epk.String("tenant-0001"), epk.String("user-000042"), epk.Number(7)}
	b.ReportAllocs()
	for b.Loop() {
		sink = epk.HashMulti(k)
	}
}

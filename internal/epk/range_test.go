package epk_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

func TestRangeContains(t *testing.T) {
	r := epk.Range{Min: "\x10", Max: "\x20"}
	in := []epk.EPK{"\x10", "\x10\x00", "\x1f\xff\xff", "\x15"}
	out := []epk.EPK{epk.Min, "\x0f\xff", "\x20", "\x20\x00", epk.Max}
	for _, e := range in {
		if !r.Contains(e) {
			t.Errorf("%v should contain %s", r, e.Hex())
		}
	}
	for _, e := range out {
		if r.Contains(e) {
			t.Errorf("%v should not contain %s", r, e.Hex())
		}
	}
	full := epk.Range{Min: epk.Min, Max: epk.Max}
	if !full.Contains(epk.Min) || full.Contains(epk.Max) || !full.Contains("\xfe\xff\xff") {
		t.Error("full range bounds wrong")
	}
	if !full.Valid() || r.Valid() == false || (epk.Range{Min: "\x20", Max: "\x20"}).Valid() || (epk.Range{Min: "\x21", Max: "\x20"}).Valid() {
		t.Error("Valid wrong")
	}
	if s := r.String(); s != "[10,20)" {
		t.Errorf("String = %q", s)
	}
	if s := full.String(); s != "[,FF)" {
		t.Errorf("String = %q", s)
	}
}

func TestPrefixRange(t *testing.T) {
	if r := epk.PrefixRange(epk.Min); r.Min != epk.Min || r.Max != epk.Max {
		t.Errorf("PrefixRange(Min) = %v, want full range", r)
	}
	p := epk.HashMulti(epk.Key{epk.String("tenant")})
	r := epk.PrefixRange(p)
	if r.String() != "["+p.Hex()+","+p.Hex()+"FF)" {
		t.Errorf("PrefixRange = %v", r)
	}
	other := epk.HashMulti(epk.Key{epk.String("other"), epk.String("x")})
	if r.Contains(other) {
		t.Error("prefix range contains a key with another first component")
	}
}

// frac reads e as a base-256 fraction padded to n bytes.
func frac(e epk.EPK, n int) *big.Rat {
	buf := make([]byte, n)
	copy(buf, e)
	num := new(big.Int).SetBytes(buf)
	den := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	return new(big.Rat).SetFrac(num, den)
}

func TestMidpointExamples(t *testing.T) {
	m, ok := epk.Midpoint(epk.Range{Min: epk.Min, Max: epk.Max})
	if !ok || (m != "\x7f" && m != "\x80") {
		t.Errorf("Midpoint(full) = %s, %v; want 7F or 80", m.Hex(), ok)
	}
	cases := []struct {
		r    epk.Range
		want epk.EPK
		ok   bool
	}{
		{epk.Range{Min: "\x10", Max: "\x11"}, "\x10\x80", true},
		{epk.Range{Min: "\x10", Max: "\x13"}, "\x11\x80", true},
		{epk.Range{Min: "\x10", Max: "\x10\x00\x00"}, "\x10\x00", true},
		{epk.Range{Min: "\x10", Max: "\x10\x00"}, "", false},
		{epk.Range{Min: epk.Min, Max: "\x00"}, "", false},
		{epk.Range{Min: "\x20", Max: "\x20"}, "", false},
		{epk.Range{Min: "\x21", Max: "\x20"}, "", false},
		{epk.Range{Min: "\x10\xff", Max: "\x11"}, "\x10\xff\x80", true},
	}
	for _, c := range cases {
		got, ok := epk.Midpoint(c.r)
		if got != c.want || ok != c.ok {
			t.Errorf("Midpoint(%v) = %s, %v; want %s, %v", c.r, got.Hex(), ok, c.want.Hex(), c.ok)
		}
	}
}

// randEPK builds short byte strings biased towards shared prefixes, zeros
// and 0xFF, where off-by-one and length mistakes show up.
func randEPK(rng *rand.Rand, base epk.EPK) epk.EPK {
	b := []byte(base)
	if len(b) > 0 && rng.IntN(2) == 0 {
		b = b[:rng.IntN(len(b)+1)]
	} else if rng.IntN(3) == 0 {
		b = nil
	}
	for range rng.IntN(5) {
		switch rng.IntN(4) {
		case 0:
			b = append(b, 0)
		case 1:
			b = append(b, 0xff)
		default:
			b = append(b, byte(rng.UintN(256)))
		}
	}
	return epk.EPK(b)
}

func TestMidpointRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	found, narrow := 0, 0
	for range 20000 {
		a := randEPK(rng, "")
		b := randEPK(rng, a)
		if a > b {
			a, b = b, a
		}
		r := epk.Range{Min: a, Max: b}
		m, ok := epk.Midpoint(r)
		if !r.Valid() {
			if ok {
				t.Fatalf("Midpoint of invalid %v returned ok", r)
			}
			continue
		}
		if !ok {
			// Only Max == Min+00 leaves nothing in between at the allowed lengths.
			if b != a+"\x00" {
				t.Fatalf("Midpoint(%v) reported no midpoint", r)
			}
			narrow++
			continue
		}
		found++
		if !(a < m && m < b) {
			t.Fatalf("Midpoint(%v) = %s not strictly inside", r, m.Hex())
		}
		n := max(len(a), len(b)) + 1
		if len(m) > n {
			t.Fatalf("Midpoint(%v) = %s longer than %d bytes", r, m.Hex(), n)
		}
		fa, fb, fm := frac(a, n), frac(b, n), frac(m, n)
		if fa.Cmp(fb) == 0 {
			continue // only zero-padding variants exist; nothing to balance
		}
		// share of the width below m: must be near 1/2
		share := new(big.Rat).Quo(new(big.Rat).Sub(fm, fa), new(big.Rat).Sub(fb, fa))
		f, _ := share.Float64()
		if f < 0.43 || f > 0.57 {
			t.Fatalf("Midpoint(%v) = %s splits at %.3f", r, m.Hex(), f)
		}
	}
	if found < 10000 {
		t.Fatalf("only %d ranges had a midpoint; generator too narrow", found)
	}
	t.Logf("midpoints: %d, too narrow: %d", found, narrow)
}

func checkTiling(t *testing.T, rs []epk.Range, n int) {
	t.Helper()
	if len(rs) != n {
		t.Fatalf("got %d ranges, want %d", len(rs), n)
	}
	if rs[0].Min != epk.Min || rs[len(rs)-1].Max != epk.Max {
		t.Fatalf("tiling does not span [Min,Max): %v .. %v", rs[0], rs[len(rs)-1])
	}
	for i, r := range rs {
		if !r.Valid() {
			t.Fatalf("range %d %v not strictly increasing", i, r)
		}
		if i+1 < len(rs) && r.Max != rs[i+1].Min {
			t.Fatalf("range %d %v does not meet range %d %v", i, r, i+1, rs[i+1])
		}
	}
}

func TestInitialRangesTile(t *testing.T) {
	for _, s := range []epk.Scheme{epk.SchemeV1, epk.SchemeV2, epk.SchemeMulti} {
		for _, n := range []int{-3, 0, 1, 2, 3, 4, 7, 16, 100, 1000} {
			rs := epk.InitialRanges(s, n)
			checkTiling(t, rs, max(n, 1))
		}
	}
	v2 := epk.InitialRanges(epk.SchemeV2, 4)
	want := []string{"", "10000000000000000000000000000000", "20000000000000000000000000000000", "30000000000000000000000000000000", "FF"}
	for i, r := range v2 {
		if r.Min.Hex() != want[i] || r.Max.Hex() != want[i+1] {
			t.Errorf("v2 range %d = %v, want [%s,%s)", i, r, want[i], want[i+1])
		}
	}
	v1 := epk.InitialRanges(epk.SchemeV1, 2)
	// 2^31 as a binary-encoded number
	if got := v1[0].Max; got != epk.EPK(epk.BinaryEncode(epk.Key{epk.Number(1 << 31)})) {
		t.Errorf("v1 split of 2 at %s, want the encoding of 2^31", got.Hex())
	}
}

func TestInitialRangesSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([]epk.Key, 10000)
	for i := range keys {
		keys[i] = epk.Key{epk.String(fmt.Sprintf("key-%d-%x", i, rng.Uint64()))}
	}
	for _, s := range []epk.Scheme{epk.SchemeV1, epk.SchemeV2, epk.SchemeMulti} {
		rs := epk.InitialRanges(s, 4)
		counts := make([]int, len(rs))
		for _, k := range keys {
			e := s.Hash(k)
			hit := -1
			for i, r := range rs {
				if r.Contains(e) {
					if hit >= 0 {
						t.Fatalf("%v: %s in two ranges", s, e.Hex())
					}
					hit = i
				}
			}
			if hit < 0 {
				t.Fatalf("%v: %s in no range", s, e.Hex())
			}
			counts[hit]++
		}
		for i, c := range counts {
			share := float64(c) / float64(len(keys))
			if share < 0.15 || share > 0.35 {
				t.Errorf("%v: range %d %v got %.1f%% of keys (%v)", s, i, rs[i], 100*share, counts)
			}
		}
		t.Logf("%v: %v", s, counts)
	}
}

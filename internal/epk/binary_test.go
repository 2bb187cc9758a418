package epk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNumberEncodingOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	nums := []float64{0, 1, -1, 2, -2, 0.5, -0.5, 5, 5.5, 1e300, -1e300, math.MaxFloat64,
		-math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), 4294967295, 1 << 31}
	for range 2000 {
		nums = append(nums, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
		nums = append(nums, float64(rng.Uint32()))
	}
	slices.Sort(nums)
	for i := 1; i < len(nums); i++ {
		a := appendNumber(nil, nums[i-1])
		b := appendNumber(nil, nums[i])
		want := 0
		if nums[i-1] < nums[i] {
			want = -1
		}
		if got := bytes.Compare(a, b); got != want {
			t.Fatalf("encodings of %v (% x) and %v (% x) compare %d, want %d", nums[i-1], a, nums[i], b, got, want)
		}
	}
	if !bytes.Equal(appendNumber(nil, math.Copysign(0, -1)), appendNumber(nil, 0)) {
		t.Error("-0 and +0 should encode alike")
	}
	// .NET/Java keep a trailing 00 when nothing follows the first byte.
	if got := appendNumber(nil, 2); !bytes.Equal(got, []byte{0x05, 0xC0, 0x00}) {
		t.Errorf("encoding of 2 = % X, want 05 C0 00", got)
	}
}

func TestStringEncodingOrder(t *testing.T) {
	strs := []string{"", "a", "a\x00", "ab", "b", "z", "é", strings.Repeat("a", 99),
		strings.Repeat("a", 100), strings.Repeat("a", 100) + "b", "\U0001F600"}
	slices.Sort(strs)
	for i := 1; i < len(strs); i++ {
		a := appendString(nil, strs[i-1], "")
		b := appendString(nil, strs[i], "")
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("encoding of %q !< encoding of %q", strs[i-1], strs[i])
		}
	}
	// Kinds order by their type byte: undefined < null < false < true < number < string.
	kinds := [][]byte{
		BinaryEncode(Key{Undefined()}), BinaryEncode(Key{Null()}), BinaryEncode(Key{Bool(false)}),
		BinaryEncode(Key{Bool(true)}), BinaryEncode(Key{Number(-1e300)}), BinaryEncode(Key{String("")}),
	}
	for i := 1; i < len(kinds); i++ {
		if bytes.Compare(kinds[i-1], kinds[i]) >= 0 {
			t.Errorf("kind order broken at %d", i)
		}
	}
	long := appendString(nil, strings.Repeat("x", 150), "")
	if len(long) != 1+101 || long[len(long)-1] != 'x'+1 {
		t.Errorf("long string encoding has %d bytes, want 102 without terminator", len(long))
	}
}

func TestCutUTF16(t *testing.T) {
	a99 := strings.Repeat("a", 99)
	cases := []struct {
		in     string
		prefix string
		lone   bool
	}{
		{"short", "short", false},
		{strings.Repeat("a", 101), strings.Repeat("a", 100), false},
		{a99 + "\U0001F600", a99, true},         // pair split after its high half
		{a99 + "b\U0001F600", a99 + "b", false}, // pair starts exactly at the limit
		{strings.Repeat("\U0001F600", 50) + "x", strings.Repeat("\U0001F600", 50), false},
		{strings.Repeat("я", 120), strings.Repeat("я", 100), false},
	}
	for _, c := range cases {
		p, lone := cutUTF16(c.in, 100)
		if p != c.prefix || lone != c.lone {
			t.Errorf("cutUTF16(%q) = %q, %v; want %q, %v", c.in, p, lone, c.prefix, c.lone)
		}
	}
}

// A v1 string cut inside a surrogate pair keeps a lone high surrogate, which
// .NET's UTF-8 encoder writes as U+FFFD, in both the hash input and the encoding.
func TestHashV1SplitSurrogate(t *testing.T) {
	a99 := strings.Repeat("a", 99)
	got := HashV1(Key{String(a99 + "\U0001F600tail")})
	in := "\x08" + a99 + "\uFFFD" + "\x00"
	want := appendNumber(nil, float64(murmur3x86_32([]byte(in), 0)))
	want = appendString(want, a99+"\uFFFD", "")
	if got != EPK(want) {
		t.Errorf("HashV1 = %s, want %s", got.Hex(), EPK(want).Hex())
	}
	// Same as hashing the .NET-truncated string directly.
	if direct := HashV1(Key{String(a99 + "\uFFFD")}); direct != got {
		t.Errorf("HashV1 of truncated form %s != %s", direct.Hex(), got.Hex())
	}
}

func TestHashAllocations(t *testing.T) {
	k := Key{String("abcdefghijklmnopqrst")}
	k3 := Key{String("tenant"), String("user"), Number(42)}
	for name, f := range map[string]func(){
		"HashV1":    func() { _ = HashV1(k) },
		"HashV2":    func() { _ = HashV2(k) },
		"HashMulti": func() { _ = HashMulti(k3) },
	} {
		// One allocation: the returned EPK string.
		if n := testing.AllocsPerRun(100, f); n > 1 {
			t.Errorf("%s allocates %.0f times, want at most 1", name, n)
		}
	}
}

func TestSchemeInvalid(t *testing.T) {
	var s Scheme
	if s.Valid() {
		t.Fatal("zero Scheme must be invalid")
	}
	defer func() {
		if recover() == nil {
			t.Error("Hash with zero Scheme did not panic")
		}
	}()
	s.Hash(Key{String("x")})
}

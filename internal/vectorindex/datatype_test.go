package vectorindex

import (
	"math"
	"testing"
)

func TestConvert(t *testing.T) {
	cases := []struct {
		t    DataType
		in   []float64
		want []float32
		ok   bool
	}{
		{Float32, []float64{1.5, -2, 0}, []float32{1.5, -2, 0}, true},
		{Float32, []float64{1e300}, nil, false},
		{Float32, []float64{math.NaN()}, nil, false},
		{Int8, []float64{-128, 0, 127}, []float32{-128, 0, 127}, true},
		{Int8, []float64{128}, nil, false},
		{Int8, []float64{1.5}, nil, false},
		{Uint8, []float64{0, 255}, []float32{0, 255}, true},
		{Uint8, []float64{-1}, nil, false},
		{Uint8, []float64{256}, nil, false},
		// Half precision: 1/3 rounds to 0x3555 = 0.333251953125; 65504 is the largest
		// finite value, 65520 rounds up to infinity; 2^-25 is halfway to the smallest
		// subnormal (2^-24) and ties to even, zero.
		{Float16, []float64{1.0 / 3, 65504, -2, math.Ldexp(1, -25), math.Ldexp(3, -26)}, []float32{0.333251953125, 65504, -2, 0, float32(math.Ldexp(1, -24))}, true},
		{Float16, []float64{65520}, nil, false},
	}
	for _, c := range cases {
		got, ok := Convert(c.t, c.in)
		if ok != c.ok {
			t.Errorf("Convert(%v, %v) ok = %v, want %v", c.t, c.in, ok, c.ok)
			continue
		}
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("Convert(%v, %v) = %v, want %v", c.t, c.in, got, c.want)
				break
			}
		}
	}
}

func TestWiden(t *testing.T) {
	if got := Int8ToFloat32([]int8{-128, 5}); got[0] != -128 || got[1] != 5 {
		t.Errorf("Int8ToFloat32 = %v", got)
	}
	if got := Uint8ToFloat32([]uint8{255, 0}); got[0] != 255 || got[1] != 0 {
		t.Errorf("Uint8ToFloat32 = %v", got)
	}
	got := Float16ToFloat32([]uint16{0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3555, 0x7C00, 0x8000})
	want := []float32{1, -2, 65504, float32(math.Ldexp(1, -24)), 0.333251953125, float32(math.Inf(1)), 0}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Float16ToFloat32[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if !math.IsNaN(float64(Float16ToFloat32([]uint16{0x7E00})[0])) {
		t.Error("0x7E00 is a NaN")
	}
	for s, want := range map[string]DataType{"float32": Float32, "Float16": Float16, "INT8": Int8, "uint8": Uint8} {
		if dt, err := ParseDataType(s); err != nil || dt != want {
			t.Errorf("ParseDataType(%q) = %v, %v", s, dt, err)
		}
	}
	if _, err := ParseDataType("float64"); err == nil {
		t.Error("ParseDataType accepted float64")
	}
}

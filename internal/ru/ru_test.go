package ru

import "testing"

func TestAnchors(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"1 KB read", PointRead(1024), 1},
		{"tiny read", PointRead(10), 1},
		{"100 KB read", PointRead(100 * 1024), 10},
		{"1 KB insert", Insert(1024), 5.5},
		{"1 KB replace", Replace(1024, 1024), 11},
		{"100 KB insert", Insert(100 * 1024), 55},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v RU, want %v", c.name, c.got, c.want)
		}
	}
	if PointRead(2048) <= PointRead(1024) || Insert(4096) <= Insert(2048) {
		t.Error("charges must grow with size past 1 KB")
	}
}

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
		{"1 KB insert of 22 index terms", Insert(1024, 22), 5.5},
		{"1 KB replace of every one of 22 terms", Replace(1024, 1024, 44), 11},
		{"1 KB replace of one value", Replace(1024, 1024, 2), 8.9},
		{"1 KB insert, one indexed path", Insert(1024, 1), 4.45},
		{"1 KB delete of 22 index terms", Delete(1024, 22), 5.5},
		{"100 KB insert, nothing indexed", Insert(100*1024, 0), 44},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v RU, want %v", c.name, c.got, c.want)
		}
	}
	if PointRead(2048) <= PointRead(1024) || Insert(4096, 0) <= Insert(2048, 0) || Insert(1024, 10) <= Insert(1024, 1) {
		t.Error("charges must grow with size past 1 KB")
	}
}

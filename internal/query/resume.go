package query

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
)

// Position is the place of one item in a container's item order, the order Cosmos returns
// items in without ORDER BY: physical partitions in the order of their ranges, and inside
// each, items in creation order. It names the range of the physical partition the item was
// read in (raw EPK bytes) and the item's creation sequence, which is unique in the container.
type Position struct {
	Min, Max string
	Seq      uint64
}

// Resume is where a read resumes. Partitions before Min were read whole. From Min on, the
// ranges of Floors follow each other: a partition in [Min, Floors[0].Max) resumes after
// Floors[0].Seq, one in [Floors[0].Max, Floors[1].Max) after Floors[1].Seq, and so on;
// partitions past the last floor are read from their start.
//
// A split makes this more than one position: when a partition splits while a query is inside
// it, both children resume after the same sequence, and while the query reads the left one
// the right one still waits with the parent's sequence.
type Resume struct {
	Min    string
	Floors []Floor // ascending by Max; Floors[0].Max > Min
	// Inclusive resumes at Floors[0].Seq instead of after it: that item's rows were not all
	// returned.
	Inclusive bool
}

// Floor is the sequence the partitions of a range resume after.
type Floor struct {
	Max string
	Seq uint64
}

// After is where reading resumes after the item at pos, given that it resumed at r (nil:
// from the start).
func (r *Resume) After(pos Position) Resume {
	out := Resume{Min: pos.Min, Floors: []Floor{{Max: pos.Max, Seq: pos.Seq}}}
	if r != nil {
		for _, f := range r.Floors {
			if f.Max > pos.Max {
				out.Floors = append(out.Floors, f)
			}
		}
	}
	return out
}

// Start is the first creation sequence to read in a partition with range [min, max); ok is
// false when the partition was read whole.
func (r *Resume) Start(min, max string) (start uint64, ok bool) {
	if r == nil {
		return 0, true
	}
	if max <= r.Min {
		return 0, false
	}
	lo := min
	if lo < r.Min {
		lo = r.Min
	}
	for i, f := range r.Floors {
		if lo < f.Max {
			if i == 0 && r.Inclusive {
				return f.Seq, true
			}
			if f.Seq == math.MaxUint64 { // a forged token: nothing comes after it
				return 0, false
			}
			return f.Seq + 1, true
		}
	}
	return 0, true
}

// resumeJSON is a Resume in continuation tokens: EPKs in hex.
type resumeJSON struct {
	Min    string      `json:"a"`
	Floors []floorJSON `json:"f"`
	Incl   bool        `json:"i,omitempty"`
}

type floorJSON struct {
	Max string `json:"x"`
	Seq uint64 `json:"q"`
}

func (r *Resume) toJSON() *resumeJSON {
	out := &resumeJSON{Min: hex.EncodeToString([]byte(r.Min)), Incl: r.Inclusive}
	for _, f := range r.Floors {
		out.Floors = append(out.Floors, floorJSON{Max: hex.EncodeToString([]byte(f.Max)), Seq: f.Seq})
	}
	return out
}

// fromJSON checks a decoded resume: valid hex, floors that ascend from Min.
func (j *resumeJSON) fromJSON() (*Resume, bool) {
	min, err := hex.DecodeString(j.Min)
	if err != nil || len(j.Floors) == 0 {
		return nil, false
	}
	r := &Resume{Min: string(min), Inclusive: j.Incl}
	prev := r.Min
	for _, f := range j.Floors {
		max, err := hex.DecodeString(f.Max)
		if err != nil || string(max) <= prev {
			return nil, false
		}
		prev = string(max)
		r.Floors = append(r.Floors, Floor{Max: prev, Seq: f.Seq})
	}
	return r, true
}

// EncodeResume writes r as an opaque token, for feeds that page in item order.
func EncodeResume(r Resume) string {
	b, _ := json.Marshal(r.toJSON())
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeResume reads a token EncodeResume wrote; ok is false for anything else.
func DecodeResume(s string) (*Resume, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	var j resumeJSON
	if json.Unmarshal(raw, &j) != nil {
		return nil, false
	}
	return j.fromJSON()
}

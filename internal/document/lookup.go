package document

// Lookup returns the JSON text of the value at the property path segs in body, a JSON object
// that value.Parse accepts, without parsing the rest: what value.Value.Get gives segment by
// segment. ok is false when a property is missing or a segment meets something other than an
// object. Of duplicate keys the last counts, as in value.Obj.
func Lookup(body []byte, segs []string) (raw []byte, ok bool) {
	start, end := 0, len(body)
	for _, seg := range segs {
		obj := body[:end]
		i := skipSpace(obj, start)
		if i >= end || obj[i] != '{' {
			return nil, false
		}
		found := false
		members(obj, i, func(m member) bool {
			if m.key == seg {
				start, end, found = m.valStart, m.end, true
			}
			return true
		})
		if !found {
			return nil, false
		}
	}
	return body[start:end], true
}

package vectorindex

import "errors"

// Overlay is a Reader that shows a base Reader with pending Changes laid over it, for a
// caller that runs several mutations in one batch: each mutation must read what the
// previous ones decided. Apply each mutation's Changes to the Overlay, then write
// Changes() — the merged result — to the batch.
type Overlay struct {
	base  Reader
	nodes map[uint64]*Node // nil: deleted
	meta  *Meta
	quant Quantizer
}

// NewOverlay returns an Overlay with nothing pending.
func NewOverlay(base Reader) *Overlay {
	return &Overlay{base: base, nodes: map[uint64]*Node{}}
}

// Apply lays ch over what is pending.
func (o *Overlay) Apply(ch Changes) {
	for _, id := range ch.Delete {
		o.nodes[id] = nil
	}
	for i := range ch.Put {
		n := ch.Put[i]
		o.nodes[n.ID] = &n
	}
	if ch.Meta != nil {
		m := *ch.Meta
		o.meta = &m
	}
	if ch.Quantizer != nil {
		o.quant = ch.Quantizer
	}
}

// Changes returns everything pending as one set of Changes.
func (o *Overlay) Changes() Changes {
	var ch Changes
	for id, n := range o.nodes {
		if n == nil {
			ch.Delete = append(ch.Delete, id)
		} else {
			ch.Put = append(ch.Put, *n)
		}
	}
	sortChanges(&ch)
	if o.meta != nil {
		m := *o.meta
		ch.Meta = &m
	}
	ch.Quantizer = o.quant
	return ch
}

// Node implements Reader.
func (o *Overlay) Node(id uint64) (Node, bool, error) {
	if n, ok := o.nodes[id]; ok {
		if n == nil {
			return Node{}, false, nil
		}
		return *n, true, nil
	}
	return o.base.Node(id)
}

// Meta implements Reader.
func (o *Overlay) Meta() (Meta, error) {
	if o.meta != nil {
		return *o.meta, nil
	}
	return o.base.Meta()
}

// Quantizer implements Reader.
func (o *Overlay) Quantizer() (Quantizer, error) {
	if o.quant != nil {
		return o.quant, nil
	}
	return o.base.Quantizer()
}

// Scan implements Scanner when the base Reader is one.
func (o *Overlay) Scan(fn func(Node) bool) error {
	sc, ok := o.base.(Scanner)
	if !ok {
		return errors.New("vectorindex: the overlay's base cannot scan")
	}
	stopped := false
	err := sc.Scan(func(n Node) bool {
		if _, over := o.nodes[n.ID]; over {
			return true
		}
		if !fn(n) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil || stopped {
		return err
	}
	for _, n := range o.nodes {
		if n != nil && !fn(*n) {
			break
		}
	}
	return nil
}

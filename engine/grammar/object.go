package grammar

import "math/bits"

// JSON objects take their properties in any order, as instances do: each
// declared property at most once, every required one before '}'. The
// object frame keeps the declared properties already seen as a bitset
// (frame.mant), so objects of up to 64 declared properties read this way;
// larger ones, and Gemma-4 calls (whose template writes arguments sorted),
// keep the schema's order (stepObject).
//
// A key is read one of two ways. Where the object takes additional
// properties, any string is a key: it is read as a string (fStr, key set)
// whose decoded bytes walk n.names, and the closing quote decides whether
// it names a declared property. Where it does not, only the declared names
// are keys: they are read byte for byte through a trie of their JSON
// spellings closing quote included (fKey), pruned to properties not yet
// seen, so a mask never opens a key that cannot be finished.

// maxAnyOrder is the most declared properties an any-order object has.
const maxAnyOrder = 64

// anyOrder is what an object node needs to read keys in any order.
type anyOrder struct {
	nameAt []int32  // n.names node → property index, -1 where no name ends
	keys   *litTrie // declared names as JSON strings after the opening quote
	keyAt  []int32  // keys node → property index, -1 where no key ends
	under  []uint64 // keys node → the properties whose keys pass through it
	req    uint64   // required properties
	live   uint64   // properties some finite value can follow
	open   bool     // additional properties can be written (addl productive)
}

// prepareAnyOrder builds n.any for a JSON object node whose names trie
// is built.
func prepareAnyOrder(n *node) {
	if len(n.props) > maxAnyOrder {
		return
	}
	a := &anyOrder{keys: newLitTrie()}
	a.nameAt = make([]int32, len(n.names.end))
	for i := range a.nameAt {
		a.nameAt[i] = -1
	}
	for j, p := range n.props {
		at := int32(0)
		for _, b := range []byte(p.name) {
			at = n.names.step(at, b)
		}
		a.nameAt[at] = int32(j)
		spelled := appendString(nil, p.name)[1:] // after the opening quote
		a.keys.add(spelled)
		if p.required {
			a.req |= 1 << j
		}
	}
	a.keyAt = make([]int32, len(a.keys.end))
	a.under = make([]uint64, len(a.keys.end))
	for i := range a.keyAt {
		a.keyAt[i] = -1
	}
	for j, p := range n.props {
		at := int32(0)
		for _, b := range appendString(nil, p.name)[1:] {
			at = a.keys.step(at, b)
			a.under[at] |= 1 << j
		}
		a.keyAt[at] = int32(j)
	}
	n.any = a
}

// setLive records which properties can be written, once productivity is known.
func (a *anyOrder) setLive(n *node) {
	a.live = 0
	for j, p := range n.props {
		if p.n.productive {
			a.live |= 1 << j
		}
	}
	a.open = n.addl != nil && n.addl.productive
}

// declared is the property a decoded key at names node at names, or -1.
func (a *anyOrder) declared(names *litTrie, at int32) int32 {
	if at < 0 || names == nil || !names.end[at] {
		return -1
	}
	return a.nameAt[at]
}

// next is what key may come next in an object at f: the declared
// properties allowed (not seen yet, and only required ones when what
// maxProperties leaves is just room for them) and whether an additional
// property may be.
func (a *anyOrder) next(n *node, f frame) (uint64, bool) {
	left := a.req &^ f.mant
	if n.maxProps >= 0 {
		room := n.maxProps - int(f.cnt)
		if room <= 0 {
			return 0, false
		}
		if room <= bits.OnesCount64(left) {
			return left & a.live, false
		}
	}
	return a.live &^ f.mant, a.open
}

func (m *matcher) stepObjectAny(s *stack, f frame, c byte, out []*stack) []*stack {
	n, a := f.n, f.n.any
	switch {
	case c == '}' && f.phase != pComma:
		if a.req&^f.mant == 0 && int(f.cnt) >= n.minProps {
			out = append(out, s.up)
		}
		return out
	case c == ',' && f.phase == pValue:
		if keys, open := a.next(n, f); keys != 0 || open {
			f.phase = pComma
			out = append(out, m.push(f, s.up))
		}
		return out
	case f.phase == pValue || c != '"':
		return out
	}
	keys, open := a.next(n, f)
	if open {
		return m.openString(n, nil, true, s, out)
	}
	if keys == 0 {
		return out
	}
	return append(out, m.push(frame{k: fKey, n: n}, s))
}

// stepKey reads a declared key (no additional properties) byte by byte.
func (m *matcher) stepKey(s *stack, f frame, c byte, out []*stack) []*stack {
	a := f.n.any
	nx := a.keys.step(f.i, c)
	if nx < 0 {
		return out
	}
	if j := a.keyAt[nx]; j >= 0 {
		return m.keyClosed(s.up, f.n, j, out)
	}
	if keys, _ := a.next(f.n, s.up.f); a.under[nx]&keys == 0 {
		return out
	}
	f.i = nx
	return append(out, m.push(f, s.up))
}

// keyClosed goes on after a key's closing quote: property j (-1: an
// additional one) of the object on stack obj, if it may be written now.
func (m *matcher) keyClosed(obj *stack, n *node, j int32, out []*stack) []*stack {
	of := obj.f
	keys, open := n.any.next(n, of)
	var value *node
	if j >= 0 {
		if keys&(1<<j) == 0 {
			return out
		}
		of.mant |= 1 << j
		value = n.props[j].n
	} else {
		if !open {
			return out
		}
		value = n.addl
	}
	of.cnt++
	of.phase = pValue
	v := m.push(frame{k: fValue, n: value}, m.push(of, obj.up))
	return append(out, m.push(frame{k: fBytes, bs: colon, i: 0}, v))
}

package agent

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schema derives a JSON Schema from the Go type t, the way [NewTool] describes
// its arguments. The mapping follows encoding/json:
//
//   - string: "string"; bool: "boolean"; signed integers: "integer"; unsigned
//     integers: "integer" with "minimum": 0; floats: "number"; []byte: a base64
//     "string"; time.Time: "string" with "format": "date-time"; other
//     encoding.TextUnmarshaler types: "string"; json.RawMessage, interface{} and
//     other json.Unmarshaler types: {} (any value);
//   - slices: "array" with "items"; arrays: likewise, with minItems = maxItems;
//   - maps with string, integer or text keys: "object" with
//     "additionalProperties";
//   - structs: "object" with "properties" in field order, "required" and
//     "additionalProperties": false. A field's name comes from its json tag
//     (fields tagged "-" and unexported fields are left out; embedded structs
//     without a tag name are flattened); a field is optional if its tag says
//     omitempty or omitzero or it is a pointer, else required; the ",string"
//     option makes it a "string". A `desc:"..."` tag, or the description= key
//     of a `jsonschema:"..."` tag, becomes its "description";
//   - pointers: the schema of the element.
//
// Channels, functions, complex numbers, unsafe pointers, non-empty interfaces,
// recursive types and duplicate field names are errors.
func Schema(t reflect.Type) (json.RawMessage, error) {
	raw, _, err := schemaOf(t)
	return raw, err
}

// schemaOf returns the schema of t and, if t is a struct (or pointer to one),
// its required top-level field names.
func schemaOf(t reflect.Type) (json.RawMessage, []string, error) {
	g := schemaGen{visiting: map[reflect.Type]bool{}}
	n, err := g.node(t)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	n.write(&buf)
	return buf.Bytes(), n.required, nil
}

// node is one schema object; write emits its keys in a fixed order.
type node struct {
	typ         string
	format      string
	encoding    string
	description string
	minimum     bool // "minimum": 0
	items       *node
	fixedItems  int // arrays: minItems = maxItems; -1: not fixed
	isObject    bool
	props       []prop
	required    []string
	additional  *node // maps: "additionalProperties"
	closed      bool  // structs: "additionalProperties": false
}

type prop struct {
	name string
	node *node
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	rawType        = reflect.TypeFor[json.RawMessage]()
	jsonUnmarsh    = reflect.TypeFor[json.Unmarshaler]()
	textUnmarsh    = reflect.TypeFor[encoding.TextUnmarshaler]()
	emptyIface     = reflect.TypeFor[any]()
	errUnsupported = fmt.Errorf("unsupported type")
)

// schemaGen builds nodes, remembering the structs it is inside of to reject
// recursive types.
type schemaGen struct {
	visiting map[reflect.Type]bool
}

// node returns the schema of t: a type with its own JSON decoding, a scalar,
// or (through array, mapNode and object) a composite.
func (g *schemaGen) node(t reflect.Type) (*node, error) {
	if n, ok := decodedNode(t); ok {
		return n, nil
	}
	n := &node{fixedItems: -1}
	switch t.Kind() {
	case reflect.String:
		n.typ = "string"
	case reflect.Bool:
		n.typ = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.typ = "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n.typ, n.minimum = "integer", true
	case reflect.Float32, reflect.Float64:
		n.typ = "number"
	case reflect.Pointer:
		return g.node(t.Elem())
	case reflect.Interface:
		if t != emptyIface && t.NumMethod() > 0 {
			return nil, fmt.Errorf("%w %v: interfaces with methods cannot be decoded", errUnsupported, t)
		}
		return n, nil
	case reflect.Slice, reflect.Array:
		return g.array(n, t)
	case reflect.Map:
		return g.mapNode(n, t)
	case reflect.Struct:
		return g.object(n, t)
	default: // Chan, Func, Complex64, Complex128, UnsafePointer, Invalid
		return nil, fmt.Errorf("%w %v", errUnsupported, t)
	}
	return n, nil
}

// decodedNode returns the schema of a type that decodes its own JSON
// (time.Time, json.RawMessage, a json.Unmarshaler or an
// encoding.TextUnmarshaler) and true, or false for any other type.
func decodedNode(t reflect.Type) (*node, bool) {
	switch {
	case t == timeType:
		return &node{typ: "string", format: "date-time", fixedItems: -1}, true
	case t == rawType:
		return &node{fixedItems: -1}, true
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(jsonUnmarsh) || reflect.PointerTo(t).Implements(jsonUnmarsh)):
		return &node{fixedItems: -1}, true
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(textUnmarsh) || reflect.PointerTo(t).Implements(textUnmarsh)):
		return &node{typ: "string", fixedItems: -1}, true
	}
	return nil, false
}

// array fills n as the schema of the slice or array t: a base64 string for
// plain byte slices, otherwise an array of t's elements (of fixed length for
// an array).
func (g *schemaGen) array(n *node, t reflect.Type) (*node, error) {
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 &&
		!reflect.PointerTo(t.Elem()).Implements(jsonUnmarsh) && !reflect.PointerTo(t.Elem()).Implements(textUnmarsh) {
		n.typ, n.encoding = "string", "base64"
		return n, nil
	}
	items, err := g.node(t.Elem())
	if err != nil {
		return nil, err
	}
	n.typ, n.items = "array", items
	if t.Kind() == reflect.Array {
		n.fixedItems = t.Len()
	}
	return n, nil
}

// mapNode fills n as the schema of the map t: an object whose
// additionalProperties are t's values. Its keys must decode from JSON strings.
func (g *schemaGen) mapNode(n *node, t reflect.Type) (*node, error) {
	switch k := t.Key(); {
	case k.Kind() == reflect.String, isInteger(k.Kind()), reflect.PointerTo(k).Implements(textUnmarsh):
	default:
		return nil, fmt.Errorf("%w %v: map keys must be strings, integers or encoding.TextUnmarshaler", errUnsupported, t)
	}
	val, err := g.node(t.Elem())
	if err != nil {
		return nil, err
	}
	n.typ, n.isObject, n.additional = "object", true, val
	return n, nil
}

// object fills n as the schema of the struct t: a closed object of its
// fields. A struct that contains itself is an error.
func (g *schemaGen) object(n *node, t reflect.Type) (*node, error) {
	if g.visiting[t] {
		return nil, fmt.Errorf("%w %v: recursive types are not supported", errUnsupported, t)
	}
	g.visiting[t] = true
	defer delete(g.visiting, t)
	n.typ, n.isObject, n.closed = "object", true, true
	seen := map[string]bool{}
	if err := g.fields(n, t, seen); err != nil {
		return nil, err
	}
	return n, nil
}

// fields adds t's fields to the object n, flattening embedded structs.
func (g *schemaGen) fields(n *node, t reflect.Type, seen map[string]bool) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if g.visiting[et] {
					return fmt.Errorf("%w %v: recursive types are not supported", errUnsupported, et)
				}
				g.visiting[et] = true
				err := g.fields(n, et, seen)
				delete(g.visiting, et)
				if err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			return fmt.Errorf("%w %v: duplicate field name %q", errUnsupported, t, name)
		}
		seen[name] = true
		fn, err := g.node(ft)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if hasOpt(opts, "string") && fn.typ != "" && fn.typ != "object" && fn.typ != "array" {
			fn = &node{typ: "string", fixedItems: -1}
		}
		if d, ok := f.Tag.Lookup("desc"); ok {
			fn.description = d
		} else if d, ok := jsonschemaDescription(f.Tag.Get("jsonschema")); ok {
			fn.description = d
		}
		n.props = append(n.props, prop{name: name, node: fn})
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") && ft.Kind() != reflect.Pointer {
			n.required = append(n.required, name)
		}
	}
	return nil
}

func isInteger(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uintptr
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// jsonschemaDescription finds description=... in a jsonschema tag, whose
// comma-separated entries escape commas as `\,`.
func jsonschemaDescription(tag string) (string, bool) {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	parts = append(parts, cur.String())
	for _, p := range parts {
		if d, ok := strings.CutPrefix(p, "description="); ok {
			return d, true
		}
	}
	return "", false
}

// write emits n as compact JSON with its keys in a fixed order: annotations,
// then array keys, then object keys.
func (n *node) write(b *bytes.Buffer) {
	b.WriteByte('{')
	w := &objWriter{b: b, first: true}
	n.writeAnnotations(w)
	n.writeArray(w)
	n.writeObject(w)
	b.WriteByte('}')
}

// objWriter writes the keys of one JSON object, with a comma before each but
// the first.
type objWriter struct {
	b     *bytes.Buffer
	first bool
}

// key writes k and its colon.
func (w *objWriter) key(k string) {
	if !w.first {
		w.b.WriteByte(',')
	}
	w.first = false
	w.b.WriteString(strconv.Quote(k)) // keys are fixed ASCII identifiers
	w.b.WriteByte(':')
}

// str writes the key k with the string value v.
func (w *objWriter) str(k, v string) {
	w.key(k)
	s, _ := json.Marshal(v)
	w.b.Write(s)
}

// writeAnnotations writes n's type, format, contentEncoding, description and
// minimum, those that are set.
func (n *node) writeAnnotations(w *objWriter) {
	if n.typ != "" {
		w.str("type", n.typ)
	}
	if n.format != "" {
		w.str("format", n.format)
	}
	if n.encoding != "" {
		w.str("contentEncoding", n.encoding)
	}
	if n.description != "" {
		w.str("description", n.description)
	}
	if n.minimum {
		w.key("minimum")
		w.b.WriteByte('0')
	}
}

// writeArray writes n's items and, for a fixed length, minItems and maxItems.
func (n *node) writeArray(w *objWriter) {
	if n.items != nil {
		w.key("items")
		n.items.write(w.b)
	}
	if n.fixedItems >= 0 {
		w.key("minItems")
		w.b.WriteString(strconv.Itoa(n.fixedItems))
		w.key("maxItems")
		w.b.WriteString(strconv.Itoa(n.fixedItems))
	}
}

// writeObject writes n's properties (unless it is a map), required and
// additionalProperties.
func (n *node) writeObject(w *objWriter) {
	b := w.b
	if n.isObject && n.additional == nil {
		w.key("properties")
		b.WriteByte('{')
		for i, p := range n.props {
			if i > 0 {
				b.WriteByte(',')
			}
			s, _ := json.Marshal(p.name)
			b.Write(s)
			b.WriteByte(':')
			p.node.write(b)
		}
		b.WriteByte('}')
	}
	if len(n.required) > 0 {
		w.key("required")
		s, _ := json.Marshal(n.required)
		b.Write(s)
	}
	if n.additional != nil {
		w.key("additionalProperties")
		n.additional.write(b)
	} else if n.closed {
		w.key("additionalProperties")
		b.WriteString("false")
	}
}

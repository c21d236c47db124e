package boot

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"
)

// The init's config travels in its argv[1], written by this binary and
// read by the init, which is this binary re-executed or the
// sandboxlab-init built with it (see reexec.Path). The text describes
// nothing: it is the fields of Config in order, each written as its
// kind says, after the fingerprint of the type's shape, so that an init
// of another build refuses it instead of reading one field as another. encoding/json would do, but on
// its first use in a process it builds its tables of the type by
// reflection, which cost 0.2 to 0.5 ms on each side of every run here;
// walking the struct directly costs microseconds.
//
// A number is its decimal digits and ';', a bool 0 or 1 and ';', a string
// its length, ':' and its bytes, a slice its length and ';' and then its
// elements, a pointer 0 (nil) or 1 and then what it points to, a struct
// its fields. A field of any other kind is an error when encoding, so a
// new field of Config is either carried or refused, never dropped.

// EncodeConfig writes v (a struct or a pointer to one) as the init reads
// it.
func EncodeConfig(v any) (string, error) {
	var b strings.Builder
	b.WriteString(shapeOf(reflect.TypeOf(v)))
	b.WriteByte('|')
	if err := encodeValue(&b, reflect.ValueOf(v), reflect.TypeOf(v).String()); err != nil {
		return "", err
	}
	return b.String(), nil
}

func encodeValue(b *strings.Builder, v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			b.WriteString("1;")
		} else {
			b.WriteString("0;")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
		b.WriteByte(';')
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
		b.WriteByte(';')
	case reflect.String:
		b.WriteString(strconv.Itoa(v.Len()))
		b.WriteByte(':')
		b.WriteString(v.String())
	case reflect.Slice:
		b.WriteString(strconv.Itoa(v.Len()))
		b.WriteByte(';')
		for i := range v.Len() {
			if err := encodeValue(b, v.Index(i), path+"[]"); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("0;")
			return nil
		}
		b.WriteString("1;")
		return encodeValue(b, v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				return fmt.Errorf("encoding the init's config: %s.%s is unexported, which the init cannot set", path, f.Name)
			}
			if err := encodeValue(b, v.Field(i), path+"."+f.Name); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("encoding the init's config: %s is a %s, which the init cannot read", path, v.Kind())
	}
	return nil
}

// DecodeConfig reads what EncodeConfig wrote into v, a pointer to a
// struct of the same type.
func DecodeConfig(s string, v any) error {
	shape, rest, _ := strings.Cut(s, "|")
	if want := shapeOf(reflect.TypeOf(v)); shape != want {
		return fmt.Errorf("decoding init config: it was written for a %s of another shape (%.16s, this init's is %s): "+
			"the init is from another build of sandboxlab than its caller; build them together (make build)",
			reflect.TypeOf(v).Elem(), shape, want)
	}
	d := decoder{s: rest}
	d.value(reflect.ValueOf(v).Elem())
	if d.err == nil && d.s != "" {
		d.err = fmt.Errorf("%d bytes left over", len(d.s))
	}
	if d.err != nil {
		return fmt.Errorf("decoding init config: %w", d.err)
	}
	return nil
}

// shapeOf is the fingerprint of t's shape: a hash of its fields' names
// and kinds, all the way down. Both sides compute it; a walk of
// Config's type takes microseconds.
func shapeOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	h := fnv.New64a()
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		fmt.Fprintf(h, "%s(", t.Kind())
		switch t.Kind() {
		case reflect.Slice, reflect.Pointer:
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				fmt.Fprintf(h, "%s:", t.Field(i).Name)
				walk(t.Field(i).Type)
			}
		}
		h.Write([]byte(")"))
	}
	walk(t)
	return strconv.FormatUint(h.Sum64(), 36)
}

// decoder reads values off the front of s; the first error stops it.
type decoder struct {
	s   string
	err error
}

// token returns the text up to the next sep and consumes both.
func (d *decoder) token(sep byte) string {
	if d.err != nil {
		return ""
	}
	i := strings.IndexByte(d.s, sep)
	if i < 0 {
		d.err = fmt.Errorf("no %q in %.20q", sep, d.s)
		return ""
	}
	t := d.s[:i]
	d.s = d.s[i+1:]
	return t
}

func (d *decoder) int() int64 {
	n, err := strconv.ParseInt(d.token(';'), 10, 64)
	if err != nil && d.err == nil {
		d.err = err
	}
	return n
}

func (d *decoder) uint() uint64 {
	n, err := strconv.ParseUint(d.token(';'), 10, 64)
	if err != nil && d.err == nil {
		d.err = err
	}
	return n
}

// length reads a count ending in sep, which must be small enough to be
// what it says.
func (d *decoder) length(sep byte) int {
	n, err := strconv.ParseInt(d.token(sep), 10, 64)
	if err != nil && d.err == nil {
		d.err = err
	}
	if d.err == nil && (n < 0 || n > int64(len(d.s))) {
		d.err = fmt.Errorf("length %d with %d bytes left", n, len(d.s))
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(d.int() != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(d.int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(d.uint())
	case reflect.String:
		n := d.length(':')
		v.SetString(d.s[:n])
		d.s = d.s[n:]
	case reflect.Slice:
		n := d.length(';')
		if n == 0 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			d.value(v.Index(i))
		}
	case reflect.Pointer:
		if d.int() == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		d.value(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(v.Field(i))
		}
	default:
		d.err = fmt.Errorf("a %s field", v.Kind())
	}
}

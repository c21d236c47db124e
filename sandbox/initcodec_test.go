package sandbox

import (
	"reflect"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// filled returns a value of t with every field, element and pointer set
// to something other than its zero value, different for each (seed
// counts up), so that a field the codec drops or mixes up shows.
func filled(t reflect.Type, seed *int) reflect.Value {
	*seed++
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(-*seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*seed) << 40 % (1 << (t.Bits() - 1)))
	case reflect.String:
		v.SetString(strings.Repeat("é;:1", *seed%4) + "/path;with:separators " + string(rune('a'+*seed%26)))
	case reflect.Slice:
		s := reflect.MakeSlice(t, 3, 3)
		for i := range 3 {
			s.Index(i).Set(filled(t.Elem(), seed))
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		p.Elem().Set(filled(t.Elem(), seed))
		v.Set(p)
	case reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(filled(t.Field(i).Type, seed))
		}
	}
	return v
}

// TestInitConfigRoundTrip: every field of initConfig, whatever is added to
// it, reaches the init as it was sent; the zero config too.
func TestInitConfigRoundTrip(t *testing.T) {
	seed := 0
	full := filled(reflect.TypeFor[initConfig](), &seed).Interface().(initConfig)
	for _, want := range []initConfig{full, {}, MustPreset(6).launchConfig(t)} {
		s, err := encodeConfig(want)
		assert.NilError(t, err)
		var got initConfig
		assert.NilError(t, decodeConfig(s, &got))
		assert.Check(t, reflect.DeepEqual(got, want), "sent %+v\ngot  %+v\nas %q", want, got, s)
	}
}

// launchConfig is the init's config for /bin/true under p.
func (p Policy) launchConfig(t *testing.T) initConfig {
	l := hostLaunch(p)
	l.addNamespaces(p, Command{Path: "/bin/true"}, t.TempDir())
	return l.cfg
}

func TestInitConfigRefusals(t *testing.T) {
	type withMap struct{ M map[string]int }
	_, err := encodeConfig(withMap{})
	assert.Check(t, is.ErrorContains(err, "withMap.M is a map, which the init cannot read"))
	type unexported struct{ a int }
	_, err = encodeConfig(unexported{a: 1})
	assert.Check(t, is.ErrorContains(err, "unexported.a is unexported"))
	s, err := encodeConfig(initConfig{Hide: []string{"/root"}})
	assert.NilError(t, err)
	for _, bad := range []string{"", s[:len(s)-1], s + "x", strings.Replace(s, "1;5:", "2;5:", 1)} {
		var c initConfig
		assert.Check(t, is.ErrorContains(decodeConfig(bad, &c), "decoding init config"), "%q", bad)
	}
}

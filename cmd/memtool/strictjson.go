package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// The strict JSON decoding of policy files and policy records.

// decodeStrict decodes data, which must hold exactly one JSON object, into
// v, a pointer to a struct, after checking every key and value against
// the struct's fields and their types: see loadPolicy. Strings may not be
// empty and numbers must be whole and not negative (or not below the
// field's `min` tag, whose error adds its `hint` tag); leaving a field
// out is the way to say "none".
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkJSON(dec, reflect.TypeOf(v).Elem(), "", ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more data after the first JSON object; the file must hold one object")
	}
	return json.Unmarshal(data, v)
}

// checkJSON reads the next value from dec and checks it against t, the
// type of a field with the tag tag ("" at the top). where names the value
// (a dotted field path) in errors.
func checkJSON(dec *json.Decoder, t reflect.Type, tag reflect.StructTag, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := cmp.Or(where, "the file")
	tok, err := dec.Token()
	if err == io.EOF {
		return fmt.Errorf("%s: empty; want a JSON object", name)
	}
	if err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if tok == nil {
		return fmt.Errorf("%s: null is not a value here; leave the field out instead", name)
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return fmt.Errorf("%s: want a JSON object, got %s", name, jsonTokenKind(tok))
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[key] = f
			names = append(names, key)
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%s: invalid JSON: %v", name, err)
			}
			key := tok.(string)
			field := key
			if where != "" {
				field = where + "." + key
			}
			if seen[key] {
				return fmt.Errorf("%s: the key appears twice", field)
			}
			seen[key] = true
			f, ok := fields[key]
			if !ok {
				for _, n := range names {
					if strings.EqualFold(n, key) {
						return fmt.Errorf("%s: unknown field (keys are lower case: %q)", field, n)
					}
				}
				return fmt.Errorf("%s: unknown field (known: %s)", field, strings.Join(names, ", "))
			}
			if err := checkJSON(dec, f.Type, f.Tag, field); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("%s: invalid JSON: %v", name, err)
		}
		return nil
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return fmt.Errorf("%s: want true or false, got %s", name, jsonTokenKind(tok))
		}
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s", name, jsonTokenKind(tok))
		}
		if s == "" {
			return fmt.Errorf("%s: empty string; leave the field out instead", name)
		}
	case reflect.Int, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a whole number, got %s", name, jsonTokenKind(tok))
		}
		least := int64(0)
		if m := tag.Get("min"); m != "" {
			var err error
			if least, err = strconv.ParseInt(m, 10, 64); err != nil {
				panic("checkJSON: bad min tag on " + name + ": " + m)
			}
		}
		most := int64(1)<<(t.Bits()-1) - 1
		if m := tag.Get("max"); m != "" {
			var err error
			if most, err = strconv.ParseInt(m, 10, 64); err != nil {
				panic("checkJSON: bad max tag on " + name + ": " + m)
			}
		}
		if i, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil || i < least || i > most {
			msg := fmt.Sprintf("%s: %s: want a whole number from %d to %d", name, n, least, most)
			if hint := tag.Get("hint"); hint != "" {
				msg += " (" + hint + ")"
			}
			return errors.New(msg)
		}
	default:
		panic("checkJSON: no rule for " + t.String())
	}
	return nil
}

// jsonTokenKind says what a JSON token starts, for errors.
func jsonTokenKind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "a list"
		}
		return "an object"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(tok)
	case string:
		return "a string"
	}
	return "null"
}

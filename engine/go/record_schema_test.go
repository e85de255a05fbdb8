package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The record contract every engine keeps (crates/chainlab-record/records.schema.json): Go's
// record structs are hand-written beside it, so each is held to its definition field by
// field. A Go field the schema does not declare, a required field Go can leave out, a
// field Go may omit that the schema requires, or a type the schema does not allow fails
// here, before any record is written.

const schemaFile = "../crates/chainlab-record/records.schema.json"

type schemaDef struct {
	Properties map[string]map[string]any `json:"properties"`
	Required   []string                  `json:"required"`
}

// goField is one JSON field a struct writes: its name, its Go type, and whether encoding/json
// may leave it out (omitempty, omitzero).
type goField struct {
	name     string
	typ      reflect.Type
	omitable bool
}

// jsonFields lists a struct's JSON fields as encoding/json writes them, an embedded struct's
// fields as its own.
func jsonFields(t reflect.Type) []goField {
	var out []goField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if tag == "-" || !f.IsExported() {
			continue
		}
		parts := strings.Split(tag, ",")
		name := parts[0]
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(parts[1:], "omitempty") || slices.Contains(parts[1:], "omitzero")
		out = append(out, goField{name: name, typ: f.Type, omitable: omit})
	}
	return out
}

// schemaTypes are the JSON types a property allows: its "type" (one or a list), or those of
// the values of its "enum" or its "const".
func schemaTypes(p map[string]any) []string {
	switch t := p["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, x.(string))
		}
		return out
	}
	values, _ := p["enum"].([]any)
	if c, ok := p["const"]; ok {
		values = append(values, c)
	}
	var out []string
	for _, v := range values {
		switch v.(type) {
		case nil:
			out = append(out, "null")
		case string:
			out = append(out, "string")
		case float64:
			out = append(out, "integer")
		case bool:
			out = append(out, "boolean")
		}
	}
	return out
}

// jsonType is the JSON type a field is written as, and whether it may be written as null: a
// nil pointer is null, unless the field is left out when nil (omitempty, omitzero); the
// optional wrappers, present, may hold null.
func jsonType(f goField) (string, bool) {
	t := f.typ
	switch t {
	case reflect.TypeOf(optionalIndex{}):
		return "integer", true
	case reflect.TypeOf(optionalChain{}):
		return "array", true
	}
	nullable := false
	if t.Kind() == reflect.Pointer {
		nullable, t = !f.omitable, t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean", nullable
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", nullable
	case reflect.Float32, reflect.Float64:
		return "number", nullable
	case reflect.String:
		return "string", nullable
	case reflect.Slice, reflect.Array:
		return "array", nullable
	}
	return "object", nullable
}

func TestRecordStructsKeepTheSchemaFieldByField(t *testing.T) {
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]schemaDef `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for def, record := range map[string]any{
		"client":        clientRecord{},
		"server":        serverRecord{},
		"generator":     generatorRecord{},
		"server_thread": serverThreadRecord{},
		"certificate":   observedCert{},
	} {
		d, ok := schema.Defs[def]
		if !ok {
			t.Fatalf("%s: no such definition in %s", def, schemaFile)
		}
		fields := jsonFields(reflect.TypeOf(record))
		written := map[string]goField{}
		for _, f := range fields {
			written[f.name] = f
			p, declared := d.Properties[f.name]
			if !declared {
				t.Errorf("%s.%s: Go writes it, the schema does not declare it", def, f.name)
				continue
			}
			allowed := schemaTypes(p)
			kind, nullable := jsonType(f)
			// An integer is a JSON number too: the schema may say either.
			if !slices.Contains(allowed, kind) && !(kind == "integer" && slices.Contains(allowed, "number")) {
				t.Errorf("%s.%s: Go writes %s, the schema allows %v", def, f.name, kind, allowed)
			}
			if nullable && !slices.Contains(allowed, "null") {
				t.Errorf("%s.%s: Go may write null, the schema allows %v", def, f.name, allowed)
			}
		}
		for _, name := range d.Required {
			f, ok := written[name]
			switch {
			case !ok:
				t.Errorf("%s.%s: required by the schema, Go has no such field", def, name)
			case f.omitable:
				t.Errorf("%s.%s: required by the schema, Go may leave it out", def, name)
			}
		}
	}
}

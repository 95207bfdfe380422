package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// machineryType is how a type of the API machinery shows: these are values a user writes as a
// string or a number, whatever Go struct parses them.
type machineryType struct {
	name, note string
	// anchor is the type's section in the Kubernetes API reference; empty when it has none.
	anchor string
}

var machineryTypes = map[string]machineryType{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   {name: "quantity", note: "int-or-string", anchor: "quantity-resource-core"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   {name: "duration", note: "a string such as 1h30m"},
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": {name: "int-or-string"},
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    {name: "object"},
}

// typeName is the Markdown of a field's type: the schema's, except where the Go type belongs to
// another package, whose name it gives, linked to the Kubernetes API reference when it is there.
func (w *walker) typeName(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) string {
	prefix := ""
	for t = deref(t); t != nil; t = deref(t.Elem()) {
		if k := t.Kind(); k == reflect.Map && valuesOf(s) != nil {
			prefix, s = prefix+"map[string]", valuesOf(s)
		} else if (k == reflect.Slice || k == reflect.Array) && itemsOf(s) != nil {
			prefix, s = prefix+"[]", itemsOf(s)
		} else {
			break
		}
	}
	if !w.foreign(t) || t.Kind() != reflect.Struct {
		return code(prefix + schemaType(s))
	}
	return w.foreignType(prefix, t)
}

// foreignType names a struct of another package, after prefix, the lists and maps that hold it.
func (w *walker) foreignType(prefix string, t reflect.Type) string {
	if m, ok := machineryTypes[t.PkgPath()+"."+t.Name()]; ok {
		text := code(prefix + m.name)
		if m.anchor != "" {
			text = "[" + text + "](" + w.ref + "#" + m.anchor + ")"
		}
		if m.note != "" {
			text += " (" + m.note + ")"
		}
		return text
	}
	if version := apiVersionOf(t.PkgPath()); version != "" {
		return "[" + code(prefix+t.Name()) + "](" + w.ref + "#" + strings.ToLower(t.Name()) + "-" + version + ")"
	}
	pkg := t.PkgPath()
	return code(prefix + pkg[strings.LastIndex(pkg, "/")+1:] + "." + t.Name())
}

// apiVersionOf is how the Kubernetes API reference names the group and version of a package of
// Kubernetes types in its anchors, such as v1-core for k8s.io/api/core/v1; empty for a package it
// does not document.
func apiVersionOf(pkg string) string {
	if pkg == "k8s.io/apimachinery/pkg/apis/meta/v1" {
		return "v1-meta"
	}
	rest, ok := strings.CutPrefix(pkg, "k8s.io/api/")
	if !ok {
		return ""
	}
	group, version, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(version, "/") {
		return ""
	}
	return version + "-" + group
}

// schemaType names the type a schema accepts.
func schemaType(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "array" && itemsOf(s) != nil:
		return "[]" + schemaType(itemsOf(s))
	case s.Type == "object" && valuesOf(s) != nil:
		return "map[string]" + schemaType(valuesOf(s))
	case s.Type == "":
		return "any"
	}
	return s.Type
}

// defaultValue is the value the API server writes when the field is unset.
func defaultValue(s *apiextensionsv1.JSONSchemaProps) string {
	if s.Default == nil || len(s.Default.Raw) == 0 {
		return ""
	}
	var str string
	if json.Unmarshal(s.Default.Raw, &str) == nil && str != "" {
		return code(str)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, s.Default.Raw); err != nil {
		return code(string(s.Default.Raw))
	}
	return code(buf.String())
}

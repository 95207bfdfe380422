package main

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// field is one row of a kind's spec or status table.
type field struct {
	// Path is the field's dotted path from the object, such as spec.backup.storage.s3.bucket; []
	// stands for every item of a list.
	Path string
	// Type, Default and Checks are Markdown; Description is plain text.
	Type, Default, Description string
	Required                   bool
	// Checks are what the API server checks of the value: bounds, enums, patterns, formats,
	// immutability and the CEL rules with their messages.
	Checks []string
}

// walker walks a schema beside the Go type it was generated from.
type walker struct {
	// own is the package path of the project's types: the walk goes into these only, and stops at
	// a type of any other package, which it links to instead.
	own string
	// ref is the Kubernetes API reference those links point into.
	ref    string
	fields []field
	// notes are checks for a field that a rule on one of its parents makes, by its fieldPath.
	notes map[string][]string
	errs  []error
}

// walkSection documents the property name (spec or status) of a kind's root schema and everything
// under it, t being the kind's Go type.
func walkSection(root *apiextensionsv1.JSONSchemaProps, t reflect.Type, name, ref string) ([]field, error) {
	s, ok := root.Properties[name]
	if !ok {
		return nil, nil
	}
	w := &walker{own: t.PkgPath(), ref: ref, notes: map[string][]string{}}
	i := slices.IndexFunc(jsonFields(t), func(f jsonField) bool { return f.name == name })
	if i < 0 {
		return nil, fmt.Errorf("%s is in the CRD but not in the Go type %s: run make manifests", name, t)
	}
	w.property(name, &s, jsonFields(t)[i], slices.Contains(root.Required, name))
	return w.fields, errors.Join(w.errs...)
}

// property adds the row of the field at path, then the rows of the fields under it; goField is
// the Go field it comes from, zero when the Go type is unknown.
func (w *walker) property(path string, s *apiextensionsv1.JSONSchemaProps, goField jsonField, required bool) {
	w.fields = append(w.fields, w.row(path, s, goField, required))
	w.descend(path, s, goField.typ)
}

// descend walks the fields under path, through lists and maps, unless they belong to a type of
// another package: those are documented where that package is.
func (w *walker) descend(path string, s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	t = deref(t)
	if w.foreign(t) {
		return
	}
	switch {
	case s.Items != nil && s.Items.Schema != nil:
		w.descend(path+"[]", s.Items.Schema, elem(t))
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		w.descend(path+".*", s.AdditionalProperties.Schema, elem(t))
	case len(s.Properties) > 0:
		w.object(path, s, t)
	}
}

// object walks the properties of an object: in the order of the Go struct's fields, which is the
// order its author chose to explain them in, then any the struct does not give, by name.
func (w *walker) object(path string, s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	goFields := map[string]jsonField{}
	var order []string
	if t != nil && t.Kind() == reflect.Struct {
		for _, f := range jsonFields(t) {
			if _, ok := s.Properties[f.name]; ok {
				order = append(order, f.name)
				goFields[f.name] = f
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if _, ok := goFields[name]; ok {
			continue
		}
		if t != nil {
			w.errs = append(w.errs, fmt.Errorf("%s.%s is in the CRD but not in the Go type %s: run make manifests", path, name, t))
		}
		order = append(order, name)
	}
	for _, name := range order {
		ps := s.Properties[name]
		w.property(path+"."+name, &ps, goFields[name], slices.Contains(s.Required, name))
	}
}

// row documents one field; a field without a description of its own is an error.
func (w *walker) row(path string, s *apiextensionsv1.JSONSchemaProps, goField jsonField, required bool) field {
	f := field{
		Path:        path,
		Type:        w.typeName(s, goField.typ),
		Default:     defaultValue(s),
		Required:    required,
		Description: oneLine(s.Description),
	}
	switch {
	case f.Description == "":
		w.errs = append(w.errs, fmt.Errorf("%s has no description: say what it does for a user in a doc comment on its Go field %s, then run make manifests", path, goField.goName))
	case borrowed(f.Description, goField):
		w.errs = append(w.errs, fmt.Errorf("%s has only the description of its type: say what it does for a user in a doc comment on its Go field %s, then run make manifests", path, goField.goName))
	}
	f.Checks = append(f.Checks, checks(s, "")...)
	if items := itemsOf(s); items != nil {
		f.Checks = append(f.Checks, checks(items, "each item: ")...)
	}
	if values := valuesOf(s); values != nil {
		f.Checks = append(f.Checks, checks(values, "each value: ")...)
	}
	f.Checks = append(f.Checks, w.notes[path]...)
	f.Checks = append(f.Checks, w.rules(path, s.XValidations, "")...)
	if items := itemsOf(s); items != nil {
		f.Checks = append(f.Checks, w.rules(path+"[]", items.XValidations, "each item: ")...)
	}
	if values := valuesOf(s); values != nil {
		f.Checks = append(f.Checks, w.rules(path+".*", values.XValidations, "each value: ")...)
	}
	return f
}

func itemsOf(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

func valuesOf(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.AdditionalProperties == nil {
		return nil
	}
	return s.AdditionalProperties.Schema
}

// rules lists the CEL rules on the field at path. A rule that reports on a field under it, by its
// fieldPath, also leaves a note on that field, whose row would otherwise not tell that it is
// checked: most often, that it cannot change.
func (w *walker) rules(path string, rules apiextensionsv1.ValidationRules, prefix string) []string {
	var out []string
	for _, r := range rules {
		target := fieldPathTarget(path, r.FieldPath)
		switch {
		case target != "" && immutability(r):
			w.notes[target] = append(w.notes[target], "immutable, by a rule on "+code(path))
		case target != "":
			w.notes[target] = append(w.notes[target], "also checked by a rule on "+code(path))
		case r.FieldPath == "" && immutability(r):
			out = append(out, prefix+"immutable")
		}
		out = append(out, prefix+ruleText(r, path))
	}
	return out
}

// jsonField is a field of a Go struct as encoding/json sees it.
type jsonField struct {
	name, goName string
	typ          reflect.Type
}

// borrowed tells whether a description is the doc comment of the field's type, which
// controller-gen copies when the field has none of its own. By Go's convention that comment starts
// with the type's name; a field's own comment starts with the field's.
func borrowed(description string, f jsonField) bool {
	t := deref(f.typ)
	if e := elem(t); e != nil {
		t = deref(e)
	}
	if t == nil || t.PkgPath() == "" || t.Name() == f.goName {
		return false
	}
	return strings.HasPrefix(description, t.Name()+" ")
}

// jsonFields lists the fields of struct t under their JSON names, in declaration order, with the
// fields of its inlined embedded structs in their place.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if inner := deref(f.Type); inner.Kind() == reflect.Struct {
				out = append(out, jsonFields(inner)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, goName: f.Name, typ: f.Type})
	}
	return out
}

// deref is the type a pointer type points to, or t.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// elem is the type of the items of a list or the values of a map, or nil.
func elem(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return t.Elem()
	}
	return nil
}

// foreign tells whether t is a named type of another package than the project's.
func (w *walker) foreign(t reflect.Type) bool {
	return t != nil && t.PkgPath() != "" && t.PkgPath() != w.own
}

package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// checks lists what the API server checks of a value by its schema alone, each prefixed.
func checks(s *apiextensionsv1.JSONSchemaProps, prefix string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	if len(s.Enum) > 0 {
		values := make([]string, 0, len(s.Enum))
		for _, v := range s.Enum {
			values = append(values, enumValue(v.Raw))
		}
		add("one of %s", strings.Join(values, ", "))
	}
	if s.Minimum != nil {
		add("%s %s", pick(s.ExclusiveMinimum, "above", "at least"), number(*s.Minimum))
	}
	if s.Maximum != nil {
		add("%s %s", pick(s.ExclusiveMaximum, "below", "at most"), number(*s.Maximum))
	}
	if s.MultipleOf != nil {
		add("a multiple of %s", number(*s.MultipleOf))
	}
	bound(add, "at least", s.MinLength, "character")
	bound(add, "at most", s.MaxLength, "character")
	bound(add, "at least", s.MinItems, "item")
	bound(add, "at most", s.MaxItems, "item")
	bound(add, "at least", s.MinProperties, "entry")
	bound(add, "at most", s.MaxProperties, "entry")
	if s.UniqueItems {
		add("items unique")
	}
	if s.Pattern != "" {
		add("matches %s", code(s.Pattern))
	}
	if s.Format != "" {
		add("format %s", code(s.Format))
	}
	if s.Nullable {
		add("may be null")
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		add("keeps fields the schema does not list")
	}
	return out
}

func bound(add func(string, ...any), side string, v *int64, noun string) {
	switch {
	case v == nil:
	case *v == 1:
		add("%s 1 %s", side, noun)
	case strings.HasSuffix(noun, "y"):
		add("%s %d %sies", side, *v, strings.TrimSuffix(noun, "y"))
	default:
		add("%s %d %ss", side, *v, noun)
	}
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// enumValue shows a string value as itself and any other as its JSON.
func enumValue(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return code(s)
	}
	return code(string(raw))
}

// ruleText shows a CEL rule that sits on the field at path, and what it answers when it fails.
func ruleText(r apiextensionsv1.ValidationRule, path string) string {
	text := "rule " + code(r.Rule)
	where := ""
	if r.FieldPath != "" {
		where = ", on " + code(strings.TrimPrefix(path+r.FieldPath, "."))
	}
	switch {
	case r.MessageExpression != "":
		text += "; message" + where + " from " + code(r.MessageExpression)
	case r.Message != "":
		text += "; message" + where + ": " + escape(oneLine(r.Message))
	case where != "":
		text += "; reported" + where
	}
	if r.Reason != nil {
		text += " (reason " + code(string(*r.Reason)) + ")"
	}
	return text
}

// immutability tells whether a rule keeps a field from changing: self == oldSelf, or a transition
// rule whose message says that what it guards is immutable, which is how a rule that lets a field
// be set once, or that knows its default, is told apart from one that only restricts a change.
func immutability(r apiextensionsv1.ValidationRule) bool {
	if strings.Join(strings.Fields(r.Rule), " ") == "self == oldSelf" {
		return true
	}
	return strings.Contains(r.Rule, "oldSelf") && strings.Contains(strings.ToLower(r.Message), "immutable")
}

// simpleFieldPath is a fieldPath of plain property names, the only kind whose field has a row.
var simpleFieldPath = regexp.MustCompile(`^(\.[A-Za-z0-9_-]+)+$`)

// fieldPathTarget is the path of the field a rule on path reports on; empty when it reports on
// path itself or names its field in a way that has no row.
func fieldPathTarget(path, fieldPath string) string {
	if fieldPath == "" || !simpleFieldPath.MatchString(fieldPath) {
		return ""
	}
	return strings.TrimPrefix(path+fieldPath, ".")
}

package apply

import (
	"reflect"
	"testing"
)

func TestDropEmpty(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"image":        "mysql:8.4.6",
		"resources":    map[string]any{"limits": map[string]any{}},
		"config":       []any{},
		"tolerations":  []any{map[string]any{"key": "dedicated"}},
		"nodeSelector": map[string]any{"disk": "ssd"},
		"affinity":     nil,
	}}
	dropEmpty(obj)
	want := map[string]any{"spec": map[string]any{
		"image":        "mysql:8.4.6",
		"tolerations":  []any{map[string]any{"key": "dedicated"}},
		"nodeSelector": map[string]any{"disk": "ssd"},
		"affinity":     nil,
	}}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("dropEmpty = %v, want %v", obj, want)
	}
}

// Package argocd holds the health check Argo CD needs to judge appkeeper's resources, and runs it
// the way Argo CD does, so that tests read a resource's health as an Argo CD user sees it.
package argocd

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Script is the Lua health check of every appkeeper kind.
//
//go:embed health.lua
var Script string

// keyPrefix starts the argocd-cm key of a kind's health check: keyPrefix + "<group>_<Kind>".
const keyPrefix = "resource.customizations.health."

// Key is the argocd-cm key of the health check of group's kind.
func Key(group, kind string) string { return keyPrefix + group + "_" + kind }

// The health statuses Argo CD knows. A script that returns another is read as Unknown.
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Suspended   = "Suspended"
	Missing     = "Missing"
	Unknown     = "Unknown"
)

// Health is what Argo CD shows of a resource: a status and a message.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// timeout is the time Argo CD gives a health script.
const timeout = time.Second

// Evaluate judges obj as Argo CD does with script as its custom health check: a resource being
// deleted is Progressing without the script running; otherwise the script runs in a state with
// only the libraries Argo CD opens for argocd-cm scripts (package, base, table; not string, math
// or io; Argo CD's reduced os, which this script has no use for, is left out too), with obj as the global obj converted from its JSON form, and its returned table is read
// back through JSON. An error is what Argo CD would show as the health check's failure.
func Evaluate(obj *unstructured.Unstructured, script string) (Health, error) {
	if obj.GetDeletionTimestamp() != nil {
		return Health{Status: Progressing, Message: "Pending deletion"}, nil
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return Health{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	returned, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("expect table output from Lua script, not %s", l.Get(-1).Type())
	}
	return readBack(returned)
}

// readBack decodes the table a script returned as Argo CD does, through its JSON form.
func readBack(returned *lua.LTable) (Health, error) {
	fields := map[string]any{}
	var err error
	returned.ForEach(func(key, value lua.LValue) {
		name, ok := key.(lua.LString)
		if !ok {
			err = fmt.Errorf("returned table has a key %v that is no string", key)
			return
		}
		fields[string(name)] = fromLua(value)
	})
	if err != nil {
		return Health{}, err
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return Health{}, err
	}
	h := Health{}
	if err := json.Unmarshal(data, &h); err != nil {
		return Health{}, fmt.Errorf("returned table %s: %w", data, err)
	}
	switch h.Status {
	case Healthy, Progressing, Degraded, Suspended, Missing, Unknown:
		return h, nil
	}
	return Health{Status: Unknown, Message: "Lua returned an invalid health status"}, nil
}

// toLua converts a value of an object's JSON form: maps become tables with string keys, lists
// become sequences, numbers (int64 or float64, as decoding gives them) become Lua numbers.
func toLua(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		list := l.CreateTable(len(v), 0)
		for _, item := range v {
			list.Append(toLua(l, item))
		}
		return list
	case map[string]any:
		table := l.CreateTable(0, len(v))
		for key, item := range v {
			table.RawSetH(lua.LString(key), toLua(l, item))
		}
		return table
	}
	return lua.LNil
}

// fromLua converts a returned value back to what encoding/json writes.
func fromLua(value lua.LValue) any {
	switch v := value.(type) {
	case lua.LBool:
		return bool(v)
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return float64(v)
	case *lua.LTable:
		fields := map[string]any{}
		v.ForEach(func(key, item lua.LValue) { fields[key.String()] = fromLua(item) })
		return fields
	}
	return nil
}

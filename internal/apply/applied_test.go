package apply

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func TestAppliedFieldsMatch(t *testing.T) {
	const spec = `{"f:spec":{"f:image":{},"f:nodeSelector":{"f:disk":{}},"f:tolerations":{},` +
		`"f:ports":{"k:{\"name\":\"db\",\"port\":3306}":{".":{},"f:name":{},"f:port":{}}},"f:args":{"v:\"--log\"":{}}}}`
	toleration := func(fields ...string) map[string]any {
		t := map[string]any{"key": "dedicated"}
		for _, f := range fields {
			t[f] = "NoSchedule"
		}
		return t
	}
	object := func(image string, nodeSelector map[string]any, toleration map[string]any, ports []any, args []any) map[string]any {
		s := map[string]any{}
		if image != "" {
			s["image"] = image
		}
		if nodeSelector != nil {
			s["nodeSelector"] = nodeSelector
		}
		if toleration != nil {
			s["tolerations"] = []any{toleration}
		}
		if ports != nil {
			s["ports"] = ports
		}
		if args != nil {
			s["args"] = args
		}
		return map[string]any{"spec": s}
	}
	disk := map[string]any{"disk": "ssd"}
	dbPort := []any{map[string]any{"name": "db", "port": int64(3306)}}
	logArg := []any{"--log"}
	live := object("mysql:8.4.6", disk, toleration("effect"), dbPort, logArg)

	tests := []struct {
		name    string
		managed []metav1.ManagedFieldsEntry
		want    map[string]any
		match   bool
	}{
		{"everything applied is still wanted", entries(testFieldOwner, spec), live, true},
		{"a map entry no longer set", entries(testFieldOwner, spec), object("mysql:8.4.6", nil, toleration("effect"), dbPort, logArg), false},
		{"a scalar no longer set", entries(testFieldOwner, spec), object("", disk, toleration("effect"), dbPort, logArg), false},
		{"an atomic list entry lost a field", entries(testFieldOwner, spec), object("mysql:8.4.6", disk, toleration(), dbPort, logArg), false},
		{"an atomic list no longer set", entries(testFieldOwner, spec), object("mysql:8.4.6", disk, nil, dbPort, logArg), false},
		{"a keyed list entry no longer set", entries(testFieldOwner, spec),
			object("mysql:8.4.6", disk, toleration("effect"), []any{map[string]any{"name": "db", "port": int64(3307)}}, logArg), false},
		{"a set entry no longer set", entries(testFieldOwner, spec), object("mysql:8.4.6", disk, toleration("effect"), dbPort, []any{"--quiet"}), false},
		{"fields another manager applied", entries("kubectl", spec), map[string]any{"spec": map[string]any{}}, true},
		{"no managed fields", nil, map[string]any{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appliedFieldsMatch(live, tt.want, tt.managed, testFieldOwner)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.match {
				t.Errorf("appliedFieldsMatch = %v, want %v", got, tt.match)
			}
		})
	}
}

func TestAppliedFieldsMatchRejectsBadManagedFields(t *testing.T) {
	if _, err := appliedFieldsMatch(nil, nil, entries(testFieldOwner, `{"k:notjson":{}}`), testFieldOwner); err == nil {
		t.Error("malformed managed fields were accepted")
	}
}

func entries(manager, fields string) []metav1.ManagedFieldsEntry {
	if !json.Valid([]byte(fields)) {
		panic("invalid managed fields " + fields)
	}
	return []metav1.ManagedFieldsEntry{{
		Manager:    manager,
		Operation:  metav1.ManagedFieldsOperationApply,
		APIVersion: "apps.appkeeper.dev/v1alpha1",
		FieldsType: "FieldsV1",
		FieldsV1:   metav1.NewFieldsV1(fields),
	}}
}

// testFieldOwner is the field manager the tables apply as.
const testFieldOwner = "appkeeper-wordpress"

func TestHoldsDesired(t *testing.T) {
	const applied = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}}}}`
	live := func(label, portName string, managed []metav1.ManagedFieldsEntry) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": label, "added-by": "a person"}, ManagedFields: managed},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{
				{Name: portName, Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
			}},
		}
	}
	desired := func(labels map[string]string) *corev1ac.ServiceApplyConfiguration {
		return corev1ac.Service("web", "default").WithLabels(labels).
			WithSpec(corev1ac.ServiceSpec().WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithProtocol(corev1.ProtocolTCP)))
	}
	tests := []struct {
		name    string
		live    *corev1.Service
		desired *corev1ac.ServiceApplyConfiguration
		held    bool
	}{
		{"applied before, every wanted value live", live("web", "http", entries(testFieldOwner, applied)), desired(map[string]string{"app": "web"}), true},
		{"never applied: created some other way", live("web", "http", nil), desired(map[string]string{"app": "web"}), false},
		{"a wanted value changed by hand", live("web", "other", entries(testFieldOwner, applied)), desired(map[string]string{"app": "web"}), false},
		{"a new value wanted", live("web", "http", entries(testFieldOwner, applied)), desired(map[string]string{"app": "site"}), false},
		{"an applied field no longer wanted", live("web", "http", entries(testFieldOwner, applied)), desired(nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held, err := holdsDesired(tt.live, tt.desired, testFieldOwner)
			if err != nil || held != tt.held {
				t.Errorf("holdsDesired = %v, %v; want %v", held, err, tt.held)
			}
		})
	}
}

package apply

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func TestChangedFields(t *testing.T) {
	service := func(port int32) *corev1ac.ServiceApplyConfiguration {
		return corev1ac.Service("web", "shop").WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "web"}).
				WithPorts(corev1ac.ServicePort().WithName("http").WithPort(port).WithTargetPort(intstr.FromString("http"))))
	}
	deployment := func(image string, env ...string) *appsv1ac.DeploymentApplyConfiguration {
		container := corev1ac.Container().WithName("nginx")
		if image != "" {
			container.WithImage(image)
		}
		for _, name := range env {
			container.WithEnv(corev1ac.EnvVar().WithName(name).WithValue("secret value"))
		}
		return appsv1ac.Deployment("web", "shop").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(2).
			WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().WithContainers(container))))
	}
	tests := []struct {
		name             string
		applied, desired any
		want             []fieldChange
	}{
		{"same", service(80), service(80), nil},
		{"port taken by another writer", corev1ac.Service("web", "shop").WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "web"})), service(80),
			[]fieldChange{{path: "spec.ports", taken: true}}},
		{"port changed by the operator", service(80), service(8080), []fieldChange{{path: "spec.ports[http].port"}}},
		{"label changed, another added", service(80), service(80).WithLabels(map[string]string{"app": "", "tier": "front"}),
			[]fieldChange{{path: "metadata.labels.app"}, {path: "metadata.labels.tier", taken: true}}},
		{"image of a named container taken", deployment(""), deployment("nginx:1.27"),
			[]fieldChange{{path: "spec.template.spec.containers[nginx].image", taken: true}}},
		{"list grown, values never named", deployment("nginx:1.27", "A"), deployment("nginx:1.27", "A", "B"),
			[]fieldChange{{path: "spec.template.spec.containers[nginx].env"}}},
		{"field no longer set", deployment("nginx:1.27"), deployment(""),
			[]fieldChange{{path: "spec.template.spec.containers[nginx].image"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := changedFields(tt.applied, tt.desired)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changedFields = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMissingFields(t *testing.T) {
	decode := func(s string) map[string]any {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// A port renumbered by hand, beside fields the API server defaulted and another manager set.
	have := decode(`{"metadata":{"name":"web","labels":{"app":"web","team":"a"}},
		"spec":{"clusterIP":"10.0.0.1","selector":{"app":"web"},
		"ports":[{"name":"http","port":9999,"protocol":"TCP","targetPort":"http"}]}}`)
	want := decode(`{"metadata":{"name":"web","labels":{"app":"web","tier":"front"}},
		"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http"}]}}`)
	got, err := json.Marshal(missingFields(have, want))
	if err != nil {
		t.Fatal(err)
	}
	const patch = `{"metadata":{"labels":{"tier":"front"}},"spec":{"ports":[{"name":"http","port":80,"targetPort":"http"}]}}`
	if string(got) != patch {
		t.Errorf("missingFields = %s, want %s", got, patch)
	}
	if got := missingFields(have, decode(`{"spec":{"ports":[{"name":"http","port":9999}]}}`)); len(got) != 0 {
		t.Errorf("missingFields of what have holds = %v, want none", got)
	}
}

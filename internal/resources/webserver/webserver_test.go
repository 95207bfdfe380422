package webserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func webServer(mutate func(*appsv1alpha1.WebServer)) *appsv1alpha1.WebServer {
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
		Spec: appsv1alpha1.WebServerSpec{
			Replicas: ptr.To[int32](3),
			Image:    appsv1alpha1.DefaultWebServerImage,
			Port:     8080,
			Service:  appsv1alpha1.WebServerService{Type: appsv1alpha1.ServiceTypeClusterIP, Port: 80},
		},
	}
	if mutate != nil {
		mutate(ws)
	}
	return ws
}

func TestDeployment(t *testing.T) {
	tests := []struct {
		name  string
		ws    *appsv1alpha1.WebServer
		check func(t *testing.T, ws *appsv1alpha1.WebServer)
	}{
		{
			name: "defaults are restricted, owned and selected by instance",
			ws:   webServer(nil),
			check: func(t *testing.T, ws *appsv1alpha1.WebServer) {
				dep := Deployment(ws)
				if *dep.Name != "web" || *dep.Namespace != "shop" || *dep.Spec.Replicas != 3 {
					t.Fatalf("name/namespace/replicas = %s/%s/%d", *dep.Name, *dep.Namespace, *dep.Spec.Replicas)
				}
				owner := dep.OwnerReferences[0]
				if *owner.Kind != "WebServer" || *owner.UID != "uid-1" || !*owner.Controller || !*owner.BlockOwnerDeletion {
					t.Errorf("owner reference = %+v", owner)
				}
				want := map[string]string{appsv1alpha1.LabelName: "webserver", appsv1alpha1.LabelInstance: "web"}
				for k, v := range want {
					if dep.Spec.Selector.MatchLabels[k] != v || dep.Spec.Template.Labels[k] != v {
						t.Errorf("selector/pod label %s = %q/%q, want %q", k, dep.Spec.Selector.MatchLabels[k], dep.Spec.Template.Labels[k], v)
					}
				}
				if dep.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
					t.Errorf("managed-by label missing: %v", dep.Labels)
				}
				pod := dep.Spec.Template.Spec
				if !*pod.SecurityContext.RunAsNonRoot || *pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("pod security context not restricted: %+v", pod.SecurityContext)
				}
				c := pod.Containers[0]
				if *c.Image != appsv1alpha1.DefaultWebServerImage || *c.Ports[0].ContainerPort != 8080 {
					t.Errorf("container image/port = %s/%d", *c.Image, *c.Ports[0].ContainerPort)
				}
				if *c.SecurityContext.AllowPrivilegeEscalation || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
					t.Errorf("container security context not restricted: %+v", c.SecurityContext)
				}
				if c.Resources != nil {
					t.Errorf("resources set without a request: %+v", c.Resources)
				}
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || *c.Lifecycle.PreStop.Sleep.Seconds != PreStopSleepSeconds {
					t.Errorf("lifecycle = %+v, want a preStop sleep so that a deleted pod serves until the Service rules drop it", c.Lifecycle)
				}
				if dep.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
					t.Errorf("maxUnavailable = %v, want 0", *dep.Spec.Strategy.RollingUpdate.MaxUnavailable)
				}
			},
		},
		{
			name: "user's pod labels never override the selector",
			ws: webServer(func(ws *appsv1alpha1.WebServer) {
				ws.Spec.PodLabels = map[string]string{appsv1alpha1.LabelInstance: "other", "team": "shop"}
				ws.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true"}
			}),
			check: func(t *testing.T, ws *appsv1alpha1.WebServer) {
				tpl := Deployment(ws).Spec.Template
				if tpl.Labels[appsv1alpha1.LabelInstance] != "web" || tpl.Labels["team"] != "shop" {
					t.Errorf("pod labels = %v", tpl.Labels)
				}
				if tpl.Annotations["prometheus.io/scrape"] != "true" {
					t.Errorf("pod annotations = %v", tpl.Annotations)
				}
			},
		},
		{
			name: "security contexts, resources and scheduling come from the spec",
			ws: webServer(func(ws *appsv1alpha1.WebServer) {
				ws.Spec.Image = "nginx:1.23.1"
				ws.Spec.Port = 80
				ws.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}
				ws.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(false)}
				ws.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
				ws.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				ws.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
				ws.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
			}),
			check: func(t *testing.T, ws *appsv1alpha1.WebServer) {
				pod := Deployment(ws).Spec.Template.Spec
				c := pod.Containers[0]
				if *pod.SecurityContext.RunAsUser != 0 || pod.SecurityContext.RunAsNonRoot != nil {
					t.Errorf("pod security context = %+v", pod.SecurityContext)
				}
				if *c.SecurityContext.Privileged || c.SecurityContext.Capabilities != nil {
					t.Errorf("container security context = %+v", c.SecurityContext)
				}
				if got := (*c.Resources.Limits)[corev1.ResourceMemory]; got.String() != "128Mi" {
					t.Errorf("memory limit = %s", got.String())
				}
				if pod.NodeSelector["disk"] != "ssd" || *pod.Tolerations[0].Key != "dedicated" || pod.Affinity.NodeAffinity == nil {
					t.Errorf("scheduling = %v %v %v", pod.NodeSelector, pod.Tolerations, pod.Affinity)
				}
				if *c.Image != "nginx:1.23.1" || *c.Ports[0].ContainerPort != 80 {
					t.Errorf("image/port = %s/%d", *c.Image, *c.Ports[0].ContainerPort)
				}
			},
		},
		{
			name: "zero replicas is kept, not defaulted",
			ws:   webServer(func(ws *appsv1alpha1.WebServer) { ws.Spec.Replicas = ptr.To[int32](0) }),
			check: func(t *testing.T, ws *appsv1alpha1.WebServer) {
				if got := *Deployment(ws).Spec.Replicas; got != 0 {
					t.Errorf("replicas = %d, want 0", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, tt.ws) })
	}
}

func TestService(t *testing.T) {
	tests := []struct {
		name         string
		service      appsv1alpha1.WebServerService
		wantType     corev1.ServiceType
		wantPort     int32
		wantNodePort *int32
	}{
		{"defaults", appsv1alpha1.WebServerService{}, corev1.ServiceTypeClusterIP, 80, nil},
		{"node port", appsv1alpha1.WebServerService{Type: appsv1alpha1.ServiceTypeNodePort, Port: 8000, NodePort: ptr.To[int32](30080)}, corev1.ServiceTypeNodePort, 8000, ptr.To[int32](30080)},
		{"load balancer, node port chosen by the cluster", appsv1alpha1.WebServerService{Type: appsv1alpha1.ServiceTypeLoadBalancer}, corev1.ServiceTypeLoadBalancer, 80, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := Service(webServer(func(ws *appsv1alpha1.WebServer) { ws.Spec.Service = tt.service }))
			port := svc.Spec.Ports[0]
			if *svc.Spec.Type != tt.wantType || *port.Port != tt.wantPort || port.TargetPort.StrVal != "http" {
				t.Errorf("type/port/target = %s/%d/%v", *svc.Spec.Type, *port.Port, port.TargetPort)
			}
			if (port.NodePort == nil) != (tt.wantNodePort == nil) || (port.NodePort != nil && *port.NodePort != *tt.wantNodePort) {
				t.Errorf("nodePort = %v, want %v", port.NodePort, tt.wantNodePort)
			}
			if svc.Spec.Selector[appsv1alpha1.LabelInstance] != "web" || *svc.OwnerReferences[0].Name != "web" {
				t.Errorf("selector/owner = %v/%v", svc.Spec.Selector, svc.OwnerReferences)
			}
		})
	}
}

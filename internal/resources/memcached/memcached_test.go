package memcached

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func memcached(mutate func(*appsv1alpha1.Memcached)) *appsv1alpha1.Memcached {
	mc := &appsv1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "shop", UID: "uid-1"},
		Spec: appsv1alpha1.MemcachedSpec{
			Size:  ptr.To[int32](3),
			Image: appsv1alpha1.DefaultMemcachedImage,
			Port:  appsv1alpha1.DefaultMemcachedPort,
		},
	}
	if mutate != nil {
		mutate(mc)
	}
	return mc
}

func TestStatefulSet(t *testing.T) {
	tests := []struct {
		name  string
		mc    *appsv1alpha1.Memcached
		check func(t *testing.T, mc *appsv1alpha1.Memcached)
	}{
		{
			name: "defaults are restricted, owned, parallel and selected by instance",
			mc:   memcached(nil),
			check: func(t *testing.T, mc *appsv1alpha1.Memcached) {
				sts := StatefulSet(mc)
				if *sts.Name != "cache" || *sts.Namespace != "shop" || *sts.Spec.Replicas != 3 || *sts.Spec.ServiceName != "cache" {
					t.Fatalf("name/namespace/replicas/serviceName = %s/%s/%d/%s", *sts.Name, *sts.Namespace, *sts.Spec.Replicas, *sts.Spec.ServiceName)
				}
				if *sts.Spec.PodManagementPolicy != "Parallel" {
					t.Errorf("podManagementPolicy = %s", *sts.Spec.PodManagementPolicy)
				}
				owner := sts.OwnerReferences[0]
				if *owner.Kind != "Memcached" || *owner.UID != "uid-1" || !*owner.Controller || !*owner.BlockOwnerDeletion {
					t.Errorf("owner reference = %+v", owner)
				}
				want := map[string]string{appsv1alpha1.LabelName: "memcached", appsv1alpha1.LabelInstance: "cache"}
				for k, v := range want {
					if sts.Spec.Selector.MatchLabels[k] != v || sts.Spec.Template.Labels[k] != v {
						t.Errorf("selector/pod label %s = %q/%q, want %q", k, sts.Spec.Selector.MatchLabels[k], sts.Spec.Template.Labels[k], v)
					}
				}
				if len(sts.Spec.Selector.MatchLabels) != 2 {
					t.Errorf("selector = %v, want the instance labels only", sts.Spec.Selector.MatchLabels)
				}
				if sts.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue ||
					sts.Spec.Template.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
					t.Errorf("managed-by label missing: %v / %v", sts.Labels, sts.Spec.Template.Labels)
				}
				pod := sts.Spec.Template.Spec
				psc := pod.SecurityContext
				if !*psc.RunAsNonRoot || *psc.RunAsUser != 11211 || *psc.RunAsGroup != 11211 || *psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("pod security context not restricted: %+v", psc)
				}
				c := pod.Containers[0]
				if *c.Image != appsv1alpha1.DefaultMemcachedImage || *c.Ports[0].ContainerPort != 11211 || *c.Ports[0].Name != "memcache" {
					t.Errorf("container image/port = %s/%d", *c.Image, *c.Ports[0].ContainerPort)
				}
				if !slices.Equal(c.Args, []string{"-p", "11211", "-U", "0"}) {
					t.Errorf("args = %q", c.Args)
				}
				sc := c.SecurityContext
				if *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("container security context not restricted: %+v", sc)
				}
				if c.ReadinessProbe.TCPSocket.Port.StrVal != "memcache" || c.LivenessProbe.TCPSocket.Port.StrVal != "memcache" {
					t.Errorf("probes = %+v / %+v", c.ReadinessProbe, c.LivenessProbe)
				}
				if c.Resources != nil {
					t.Errorf("resources set without a request: %+v", c.Resources)
				}
			},
		},
		{
			name: "user's pod labels never override the selector or the managed-by label",
			mc: memcached(func(mc *appsv1alpha1.Memcached) {
				mc.Spec.PodLabels = map[string]string{appsv1alpha1.LabelInstance: "other", appsv1alpha1.LabelManagedBy: "me", "team": "shop"}
				mc.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true"}
			}),
			check: func(t *testing.T, mc *appsv1alpha1.Memcached) {
				tpl := StatefulSet(mc).Spec.Template
				if tpl.Labels[appsv1alpha1.LabelInstance] != "cache" || tpl.Labels["team"] != "shop" ||
					tpl.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
					t.Errorf("pod labels = %v", tpl.Labels)
				}
				if tpl.Annotations["prometheus.io/scrape"] != "true" {
					t.Errorf("pod annotations = %v", tpl.Annotations)
				}
			},
		},
		{
			name: "security contexts, resources, flags and scheduling come from the spec",
			mc: memcached(func(mc *appsv1alpha1.Memcached) {
				mc.Spec.Image = "memcached:1.6.37"
				mc.Spec.Port = 11311
				mc.Spec.MaxConnections = ptr.To[int32](4096)
				mc.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
				mc.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(false)}
				mc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
				mc.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				mc.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
				mc.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
			}),
			check: func(t *testing.T, mc *appsv1alpha1.Memcached) {
				pod := StatefulSet(mc).Spec.Template.Spec
				c := pod.Containers[0]
				if *pod.SecurityContext.RunAsUser != 1000 || pod.SecurityContext.RunAsNonRoot != nil {
					t.Errorf("pod security context = %+v", pod.SecurityContext)
				}
				if *c.SecurityContext.Privileged || c.SecurityContext.Capabilities != nil || c.SecurityContext.ReadOnlyRootFilesystem != nil {
					t.Errorf("container security context = %+v", c.SecurityContext)
				}
				if got := (*c.Resources.Limits)[corev1.ResourceMemory]; got.String() != "128Mi" {
					t.Errorf("memory limit = %s", got.String())
				}
				if pod.NodeSelector["disk"] != "ssd" || *pod.Tolerations[0].Key != "dedicated" || pod.Affinity.PodAntiAffinity == nil {
					t.Errorf("scheduling = %v %v %v", pod.NodeSelector, pod.Tolerations, pod.Affinity)
				}
				if *c.Image != "memcached:1.6.37" || *c.Ports[0].ContainerPort != 11311 {
					t.Errorf("image/port = %s/%d", *c.Image, *c.Ports[0].ContainerPort)
				}
				if want := []string{"-p", "11311", "-U", "0", "-m", "102", "-c", "4096"}; !slices.Equal(c.Args, want) {
					t.Errorf("args = %q, want %q", c.Args, want)
				}
			},
		},
		{
			name: "size zero is kept, not defaulted",
			mc:   memcached(func(mc *appsv1alpha1.Memcached) { mc.Spec.Size = ptr.To[int32](0) }),
			check: func(t *testing.T, mc *appsv1alpha1.Memcached) {
				if got := *StatefulSet(mc).Spec.Replicas; got != 0 {
					t.Errorf("replicas = %d, want 0", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, tt.mc) })
	}
}

func TestMemoryMB(t *testing.T) {
	tests := []struct {
		name     string
		memoryMB *int32
		limit    string // empty: no memory limit
		request  string // empty: no memory request
		want     int64
		wantSet  bool
	}{
		{"neither: memcached's default", nil, "", "", 0, false},
		{"a request alone does not size the cache", nil, "", "256Mi", 0, false},
		{"128Mi limit", nil, "128Mi", "", 102, true},
		{"1Gi limit", nil, "1Gi", "", 819, true},
		{"decimal limit", nil, "100M", "", 76, true},
		{"limit in bytes", nil, "67108864", "", 51, true},
		{"tiny limit still lets memcached start", nil, "1Mi", "", 2, true},
		{"explicit memoryMB wins over the limit", ptr.To[int32](64), "128Mi", "", 64, true},
		{"explicit memoryMB without a limit", ptr.To[int32](2048), "", "", 2048, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := appsv1alpha1.MemcachedSpec{MemoryMB: tt.memoryMB}
			if tt.limit != "" {
				spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(tt.limit)}
			}
			if tt.request != "" {
				spec.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(tt.request)}
			}
			got, set := MemoryMB(spec)
			if got != tt.want || set != tt.wantSet {
				t.Errorf("MemoryMB = %d, %t; want %d, %t", got, set, tt.want, tt.wantSet)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1alpha1.Memcached)
		want   []string
	}{
		{"defaults: port and no UDP", nil, []string{"-p", "11211", "-U", "0"}},
		{"memory and connections", func(mc *appsv1alpha1.Memcached) {
			mc.Spec.MemoryMB = ptr.To[int32](512)
			mc.Spec.MaxConnections = ptr.To[int32](64)
		}, []string{"-p", "11211", "-U", "0", "-m", "512", "-c", "64"}},
		{"derived memory", func(mc *appsv1alpha1.Memcached) {
			mc.Spec.Port = 12000
			mc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
		}, []string{"-p", "12000", "-U", "0", "-m", "409"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Args(memcached(tt.mutate)); !slices.Equal(got, tt.want) {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestService(t *testing.T) {
	tests := []struct {
		name string
		port int32
	}{
		{"default port", 11211},
		{"custom port", 11311},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := Service(memcached(func(mc *appsv1alpha1.Memcached) { mc.Spec.Port = tt.port }))
			port := svc.Spec.Ports[0]
			if *svc.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("clusterIP = %s, want a headless Service", *svc.Spec.ClusterIP)
			}
			if *port.Port != tt.port || port.TargetPort.StrVal != "memcache" || *port.Protocol != corev1.ProtocolTCP {
				t.Errorf("port/target/protocol = %d/%v/%s", *port.Port, port.TargetPort, *port.Protocol)
			}
			if svc.Spec.Selector[appsv1alpha1.LabelInstance] != "cache" || len(svc.Spec.Selector) != 2 || *svc.OwnerReferences[0].Name != "cache" {
				t.Errorf("selector/owner = %v/%v", svc.Spec.Selector, svc.OwnerReferences)
			}
			if svc.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
				t.Errorf("labels = %v", svc.Labels)
			}
		})
	}
}

func TestMemoryProblem(t *testing.T) {
	limit := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	tests := []struct {
		name     string
		memoryMB *int32
		res      corev1.ResourceRequirements
		problem  bool
	}{
		{"neither set", nil, corev1.ResourceRequirements{}, false},
		{"memoryMB without a limit", ptr.To[int32](512), corev1.ResourceRequirements{}, false},
		{"a limit without memoryMB", nil, limit("256Mi"), false},
		{"memoryMB below the limit", ptr.To[int32](200), limit("256Mi"), false},
		{"memoryMB at the limit", ptr.To[int32](256), limit("256Mi"), false},
		{"memoryMB above the limit", ptr.To[int32](257), limit("256Mi"), true},
		{"memoryMB above a decimal limit", ptr.To[int32](256), limit("256M"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MemoryProblem(appsv1alpha1.MemcachedSpec{MemoryMB: tt.memoryMB, Resources: tt.res})
			if (got != "") != tt.problem {
				t.Errorf("MemoryProblem = %q, want a problem: %v", got, tt.problem)
			}
			if got != "" && (!strings.Contains(got, "spec.memoryMB") || !strings.Contains(got, "spec.resources.limits.memory")) {
				t.Errorf("MemoryProblem = %q, want it to name both fields", got)
			}
		})
	}
}

package mysql

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func tunedMySQL(mode appsv1alpha1.TuningMode, resources corev1.ResourceRequirements, config ...string) *appsv1alpha1.MySQL {
	m := &appsv1alpha1.MySQL{}
	m.Name, m.Namespace = "shop", "ns"
	m.Spec.Storage.Size = resource.MustParse("10Gi")
	m.Spec.Resources = resources
	m.Spec.Tuning = appsv1alpha1.MySQLTuning{Mode: mode, Profile: appsv1alpha1.ProfileMixed}
	m.Spec.Config = config
	return m
}

func memoryLimit(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
}

func TestTunedSettingsGoToMyCnfBeforeTheUsersLines(t *testing.T) {
	m := tunedMySQL(appsv1alpha1.TuningAuto, memoryLimit("1Gi"), "Max-Connections = 500", "long_query_time=2")
	cnf := MyCnf(m)
	pool := strings.Index(cnf, "innodb_buffer_pool_size=528M\n")
	users := strings.Index(cnf, "Max-Connections = 500\n")
	if pool < 0 || users < pool || strings.Contains(cnf, "max_connections=31") {
		t.Errorf("my.cnf:\n%s\nwant the tuned pool before the user's lines, and the user's max_connections alone", cnf)
	}
	status := Tuning(m)
	for _, s := range status.Settings {
		if want := map[bool]string{true: "Max-Connections = 500"}[s.Name == "max_connections"]; s.OverriddenBy != want {
			t.Errorf("%s overridden by %q, want %q", s.Name, s.OverriddenBy, want)
		}
	}
	if status.Memory != "1Gi" || status.WorstCase != "1016Mi" || status.Message != "" {
		t.Errorf("status %+v, want 1Gi computed to a worst case of 1016Mi", status)
	}
}

func TestRecommendAndOffLeaveMyCnfAlone(t *testing.T) {
	untuned := MyCnf(tunedMySQL(appsv1alpha1.TuningOff, memoryLimit("1Gi")))
	if strings.Contains(untuned, "innodb_buffer_pool_size") || Tuning(tunedMySQL(appsv1alpha1.TuningOff, memoryLimit("1Gi"))) != nil {
		t.Errorf("Off: my.cnf\n%s\nwant no tuned line and no status", untuned)
	}
	recommend := tunedMySQL(appsv1alpha1.TuningRecommend, memoryLimit("1Gi"))
	if MyCnf(recommend) != untuned {
		t.Errorf("Recommend: my.cnf\n%s\nwant it as with Off:\n%s", MyCnf(recommend), untuned)
	}
	if s := Tuning(recommend); s == nil || len(s.Settings) != 12 || s.Mode != appsv1alpha1.TuningRecommend {
		t.Errorf("Recommend: status %+v, want the settings shown", s)
	}
}

func TestWithoutMemoryNothingIsComputed(t *testing.T) {
	for message, resources := range map[string]corev1.ResourceRequirements{
		"spec.resources sets no memory limit or request: the server keeps its defaults":                    {},
		"128Mi of memory is less than the 256Mi a server needs to be sized: the server keeps its defaults": memoryLimit("128Mi"),
	} {
		m := tunedMySQL(appsv1alpha1.TuningAuto, resources)
		if s := Tuning(m); s == nil || len(s.Settings) != 0 || s.Message != message || strings.Contains(MyCnf(m), "innodb_buffer_pool_size") {
			t.Errorf("Tuning = %+v, want no settings and %q", s, message)
		}
	}
	requested := tunedMySQL(appsv1alpha1.TuningAuto, corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}})
	if s := Tuning(requested); s.Memory != "512Mi" || len(s.Settings) == 0 {
		t.Errorf("Tuning with a request alone = %+v, want it sized from the request", s)
	}
}

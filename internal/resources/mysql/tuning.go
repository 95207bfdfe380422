package mysql

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/tuning"
)

// Tuning is what the operator computes from the MySQL's memory and data volume, with the
// spec.config line that overrides each setting; nil when tuning is off.
func Tuning(m *appsv1alpha1.MySQL) *appsv1alpha1.TuningStatus {
	t := m.Spec.Tuning
	if t.Mode == appsv1alpha1.TuningOff {
		return nil
	}
	status := &appsv1alpha1.TuningStatus{Mode: t.Mode, Profile: t.Profile}
	// The API server defaults both; a MySQL built elsewhere may lack them.
	if status.Mode == "" {
		status.Mode = appsv1alpha1.TuningRecommend
	}
	if status.Profile == "" {
		status.Profile = appsv1alpha1.ProfileMixed
	}
	memory, ok := memoryOf(m.Spec.Resources)
	if !ok {
		status.Message = "spec.resources sets no memory limit or request: the server keeps its defaults"
		return status
	}
	status.Memory = memory.String()
	computed, err := tuning.ForMySQL(memory, m.Spec.Storage.Size, status.Profile)
	if err != nil {
		status.Message = err.Error() + ": the server keeps its defaults"
		return status
	}
	for _, s := range computed.Settings {
		s.OverriddenBy = setBy(m.Spec.Config, s.Name)
		status.Settings = append(status.Settings, s)
	}
	status.WorstCase = resource.NewQuantity(computed.WorstCase<<20, resource.BinarySI).String()
	return status
}

// tunedCnf is the my.cnf lines of the settings tuning writes: those of Auto that no spec.config
// line sets.
func tunedCnf(m *appsv1alpha1.MySQL) string {
	t := Tuning(m)
	if t == nil || t.Mode != appsv1alpha1.TuningAuto {
		return ""
	}
	var b strings.Builder
	for _, s := range t.Settings {
		if s.OverriddenBy == "" {
			b.WriteString(s.Name + "=" + s.Value + "\n")
		}
	}
	return b.String()
}

// memoryOf is the container's memory limit, or its request when it has no limit.
func memoryOf(r corev1.ResourceRequirements) (resource.Quantity, bool) {
	if limit, ok := r.Limits[corev1.ResourceMemory]; ok {
		return limit, true
	}
	request, ok := r.Requests[corev1.ResourceMemory]
	return request, ok
}

// setBy is the line of config that sets the option name, in any of my.cnf's spellings (dashes
// for underscores, any case, a loose- prefix), or empty.
func setBy(config []string, name string) string {
	want := optionName(name)
	for _, line := range config {
		option, _, _ := strings.Cut(line, "=")
		if optionName(option) == want {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func optionName(s string) string {
	s = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	return strings.TrimPrefix(s, "loose_")
}

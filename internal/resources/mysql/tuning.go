package mysql

import (
	"cmp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/tuning"
)

// Tuning is what the operator computes from the MySQL's memory and data volume, with the
// spec.config line that overrides each setting; nil when tuning is off.
func Tuning(m *appsv1alpha1.MySQL) *appsv1alpha1.TuningStatus {
	// The API server defaults the profile; a MySQL built elsewhere may lack it.
	profile := cmp.Or(m.Spec.Tuning.Profile, appsv1alpha1.ProfileMixed)
	status := tuning.Status(m.Spec.Tuning.Mode, m.Spec.Resources, func(memory resource.Quantity) (tuning.Computed, error) {
		return tuning.ForMySQL(memory, m.Spec.Storage.Size, profile)
	})
	if status == nil {
		return nil
	}
	status.Profile = profile
	for i := range status.Settings {
		status.Settings[i].OverriddenBy = setBy(m.Spec.Config, status.Settings[i].Name)
	}
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

package wordpress

import (
	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/tuning"
)

// Tuning is what the operator computes from the WordPress's memory: how many workers Apache
// runs; nil when tuning is off.
func Tuning(wp *appsv1alpha1.WordPress) *appsv1alpha1.TuningStatus {
	return tuning.Status(wp.Spec.Tuning.Mode, wp.Spec.Resources, tuning.ForApache)
}

// apacheArgs is the container's command line when tuning is Auto and computed settings: Apache
// started as the image starts it, each setting a directive read after its configuration, which
// the directive replaces. Otherwise it is nil, and the image's own command runs.
func apacheArgs(wp *appsv1alpha1.WordPress) []string {
	t := Tuning(wp)
	if t == nil || t.Mode != appsv1alpha1.TuningAuto || len(t.Settings) == 0 {
		return nil
	}
	args := []string{"apache2-foreground"}
	for _, s := range t.Settings {
		args = append(args, "-c", s.Name+" "+s.Value)
	}
	return args
}

// Package tuning computes a server's settings from the resources it is given, such that the
// server cannot use more memory than it has, whatever its clients do within its limits.
package tuning

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

const mib = 1 << 20

// Computed are the settings computed for a server, in its configuration's order and spelling.
type Computed struct {
	Settings []appsv1alpha1.TunedSetting
	// WorstCase is the memory, in MiB, the server can use with them.
	WorstCase int64
}

// List is settings as name=value on one line, each overridden one with what sets it in its place,
// for an Event.
func List(settings []appsv1alpha1.TunedSetting) string {
	lines := make([]string, 0, len(settings))
	for _, s := range settings {
		line := s.Name + "=" + s.Value
		if s.OverriddenBy != "" {
			line += " (spec.config sets " + s.OverriddenBy + ")"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, ", ")
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// Status is what tuning under mode computes from a container's resources with compute: nil when
// mode is Off, and otherwise the settings and their worst case, or the message saying why none
// were computed. The API server defaults mode to Recommend; an object built elsewhere may lack it.
func Status(mode appsv1alpha1.TuningMode, r corev1.ResourceRequirements, compute func(memory resource.Quantity) (Computed, error)) *appsv1alpha1.TuningStatus {
	if mode == appsv1alpha1.TuningOff {
		return nil
	}
	status := &appsv1alpha1.TuningStatus{Mode: cmp.Or(mode, appsv1alpha1.TuningRecommend)}
	memory, ok := memoryOf(r)
	if !ok {
		status.Message = "spec.resources sets no memory limit or request: the server keeps its defaults"
		return status
	}
	status.Memory = memory.String()
	computed, err := compute(memory)
	if err != nil {
		status.Message = err.Error() + ": the server keeps its defaults"
		return status
	}
	status.Settings = computed.Settings
	status.WorstCase = resource.NewQuantity(computed.WorstCase*mib, resource.BinarySI).String()
	return status
}

// memoryOf is the container's memory limit, or its request when it has no limit.
func memoryOf(r corev1.ResourceRequirements) (resource.Quantity, bool) {
	if limit, ok := r.Limits[corev1.ResourceMemory]; ok {
		return limit, true
	}
	request, ok := r.Requests[corev1.ResourceMemory]
	return request, ok
}

// Change says what changed from was to now, for an Event: the settings now computed, and whether
// they are applied (then as applied says) or recommended only. It is empty when nothing worth
// telling changed: no settings are computed now, or the status is new, as at creation, or its
// settings and mode are the same.
func Change(was, now *appsv1alpha1.TuningStatus, applied string) string {
	if was == nil || now == nil || len(now.Settings) == 0 || (slices.Equal(was.Settings, now.Settings) && was.Mode == now.Mode) {
		return ""
	}
	how := "applied: " + applied
	if now.Mode != appsv1alpha1.TuningAuto {
		how = "recommended only, as spec.tuning.mode is " + string(now.Mode)
	}
	of := "for " + now.Memory + " of memory"
	if now.Profile != "" {
		of += " and the " + string(now.Profile) + " profile"
	}
	return of + ": " + List(now.Settings) + "; " + how
}

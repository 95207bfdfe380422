package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/internal/conditions"
)

func TestBrokenTag(t *testing.T) {
	broken := regexp.MustCompile(brokenTag)
	for image, want := range map[string]bool{
		"nginx:broken":                    true,
		"registry:5000/team/nginx:broken": true,
		"nginx:broken@sha256:0123abcd":    true,
		"nginx:1.27":                      false,
		"nginx":                           false,
		"memcached:1.6-broken":            false,
		"nginx:broken-1":                  false,
		"broken/nginx:1.27":               false,
		"broken:1.0":                      false,
		"registry:5000/broken":            false,
	} {
		if got := broken.MatchString(image); got != want {
			t.Errorf("%s: broken %t, want %t", image, got, want)
		}
	}
}

func TestWriteStagesAddsTheCrashLoopStage(t *testing.T) {
	binDir := DefaultBinDir()
	if _, err := os.Stat(filepath.Join(binDir, "kwok-stages")); err != nil {
		t.Skipf("no kwok stages: run \"make controlplane\": %v", err)
	}
	dest := filepath.Join(t.TempDir(), "stages.yaml")
	if err := writeStages(binDir, dest, ""); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	type expression struct{ Key, Operator string }
	stages := map[string][]expression{}
	templates := map[string]string{}
	for _, doc := range strings.Split(string(raw), "---\n")[1:] {
		if err := checkStage([]byte(doc)); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		var stage struct {
			Metadata struct{ Name string }
			Spec     struct {
				Selector struct{ MatchExpressions []expression }
				Next     struct{ StatusTemplate string }
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			t.Fatal(err)
		}
		stages[stage.Metadata.Name] = stage.Spec.Selector.MatchExpressions
		templates[stage.Metadata.Name] = stage.Spec.Next.StatusTemplate
	}
	if len(stages) != len(stageFiles)+1 {
		t.Errorf("%d stages, want kwok's %d and the crash loop", len(stages), len(stageFiles))
	}
	for name, operator := range map[string]string{"pod-ready": "DoesNotExist", "pod-complete": "DoesNotExist", "pod-crash-loop": "Exists"} {
		if !slices.Contains(stages[name], expression{Key: brokenImages, Operator: operator}) {
			t.Errorf("stage %s selects %+v, want broken images %s", name, stages[name], operator)
		}
	}
	// The template tells the broken containers with the selector's own expression.
	tpl := templates["pod-crash-loop"]
	for _, want := range []string{`$broken := "` + brokenTag + `"`, "reason: CrashLoopBackOff", "back-off 10s restarting failed container=%s pod=%s"} {
		if !strings.Contains(tpl, want) {
			t.Errorf("crash-loop template lacks %q", want)
		}
	}
}

// crashLoopBrokenImages checks on a running cluster that the pods with an image tagged "broken"
// crash-loop and are never ready, and that the others run as before.
func crashLoopBrokenImages(ctx context.Context, t *testing.T, cfg *rest.Config) {
	t.Helper()
	cl, err := client.NewWithWatch(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	w, err := cl.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns), client.HasLabels{"crash-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pods := map[string]*corev1.Pod{
		"broken":      testPod("broken", nil, "nginx:broken"),
		"init-broken": testPod("init-broken", []string{"busybox:broken"}, "nginx:1.27"),
		"sidecar":     testPod("sidecar", nil, "nginx:1.27", "registry:5000/log/agent:broken@sha256:0123abcd"),
		"suffix":      testPod("suffix", []string{"busybox:1.36"}, "memcached:1.6-broken"),
	}
	began := time.Now()
	for _, pod := range pods {
		if err := cl.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	everReady := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for settled := map[string]bool{}; len(settled) < len(pods); {
		select {
		case ev := <-w.ResultChan():
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			pods[pod.Name] = pod
			everReady[pod.Name] = everReady[pod.Name] || conditions.PodReady(pod)
			settled[pod.Name] = conditions.PodReady(pod) || conditions.FindPodProblem(pod) != nil
		case <-deadline:
			t.Fatal("the test pods did not all become ready or crash-loop within 30s")
		}
	}
	t.Logf("pods ready or crash-looping in %s", time.Since(began).Round(time.Millisecond))
	// Anything a racing stage would do has happened by now.
	if err := sleepCtx(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	for name, pod := range pods {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		if err := checkCrashLoop(pod, name != "suffix", everReady[name]); err != nil {
			t.Errorf("pod %s: %v", name, err)
		}
		if err := cl.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
			t.Error(err)
		}
	}
}

// checkCrashLoop tells how pod differs from a pod that crash-loops (broken) or runs.
func checkCrashLoop(pod *corev1.Pod, broken, everReady bool) error {
	if !broken {
		if !conditions.PodReady(pod) || pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s ready %t, want Running and ready", pod.Status.Phase, conditions.PodReady(pod))
		}
		return nil
	}
	if everReady {
		return fmt.Errorf("was ready at some point")
	}
	wantPhase := corev1.PodRunning
	if len(pod.Spec.InitContainers) > 0 {
		wantPhase = corev1.PodPending
	}
	if pod.Status.Phase != wantPhase {
		return fmt.Errorf("phase %s, want %s", pod.Status.Phase, wantPhase)
	}
	var looping []string
	for _, cs := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			looping = append(looping, cs.Name)
			want := fmt.Sprintf("back-off 10s restarting failed container=%s pod=%s_%s(%s)", cs.Name, pod.Name, pod.Namespace, pod.UID)
			if w.Message != want || cs.RestartCount < 1 || cs.Ready {
				return fmt.Errorf("container %s: message %q restarts %d ready %t, want %q, at least 1 and false", cs.Name, w.Message, cs.RestartCount, cs.Ready, want)
			}
		}
	}
	if len(looping) != 1 {
		return fmt.Errorf("crash-looping containers %q, want the broken one", looping)
	}
	return nil
}

func testPod(name string, initImages []string, images ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"crash-test": name}},
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)},
	}
	for i, image := range initImages {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: fmt.Sprintf("init-%d", i), Image: image})
	}
	for i, image := range images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("app-%d", i), Image: image})
	}
	return pod
}

package localcluster

import (
	"testing"
	"time"
	"os"

	"github.com/go-logr/logr/funcr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestDebugKeep(t *testing.T) {
	dir := os.Getenv("LC_DEBUG_DIR")
	if dir == "" { t.Skip() }
	log := funcr.New(func(p, a string) { t.Logf("%s %s %s", time.Now().Format("15:04:05.000"), p, a) }, funcr.Options{Verbosity: 1})
	began := time.Now()
	c, err := Start(t.Context(), Options{Dir: dir, Log: log, CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	if err != nil { t.Fatal(err) }
	t.Logf("start took %s", time.Since(began))
	if d := os.Getenv("LC_HOLD"); d != "" { x, _ := time.ParseDuration(d); time.Sleep(x) }
	b := time.Now()
	if err := c.Stop(); err != nil { t.Fatal(err) }
	t.Logf("stop took %s", time.Since(b))
}

func TestDebugCRDDelay(t *testing.T) {
	dir := os.Getenv("LC_DEBUG_DIR")
	if dir == "" { t.Skip() }
	c, err := Start(t.Context(), Options{Dir: dir, CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	if err != nil { t.Fatal(err) }
	defer c.Stop()
	cl, _ := c.client()
	x, _ := time.ParseDuration(os.Getenv("LC_SLEEP"))
	time.Sleep(x)
	b := time.Now()
	createWidget(t.Context(), t, cl)
	t.Logf("create took %s", time.Since(b))
}

package operator_test

import (
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

var k8s client.Client

// TestMain runs the operator on an API server that serves prometheus-operator's PodMonitor from
// the start, with the CRD prometheus-operator releases.
func TestMain(m *testing.M) {
	crd, err := testcluster.PrometheusOperatorCRD("podmonitors")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(testenv.RunWithOperator(m, &k8s, crd))
}

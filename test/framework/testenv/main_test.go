package testenv

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(RunWithOperator(m, &k8s))
}

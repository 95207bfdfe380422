package memcached_test

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOperator(m, &k8s))
}

package wordpressbackup_test

import (
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOperator(m, &k8s))
}

const timeout = 20 * time.Second

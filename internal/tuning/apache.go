package tuning

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// What Apache with PHP holds, in MiB of the container's memory that the kernel cannot reclaim:
// its own, and what each worker may add while it renders a page. Measured on the project's image
// (Debian's Apache 2.4 with mod_php 8.2, prefork) serving WordPress's bare site: the parent, five
// idle workers and PHP's opcode cache take 62; a worker rendering a page adds 4 to 5, page
// caches aside. A site with plugins holds far more per request in PHP's heap, which the worker
// keeps once grown: a worker is given 40, eight times the bare site's.
const (
	apacheOwn        = 64
	apacheWorker     = 40
	minApacheWorkers = 2
	// maxApacheWorkers is prefork's default ServerLimit, which MaxRequestWorkers cannot pass.
	maxApacheWorkers = 256
)

// ForApache computes how many requests Apache serves at once in a container of the given memory:
// as many workers as fit beside Apache's own memory, each rendering a page. The spare workers
// Apache keeps idle are among them, so their own settings need not change. It fails, saying why,
// when not even two fit.
func ForApache(memory resource.Quantity) (Computed, error) {
	mem := memory.Value() / mib
	if least := int64(apacheOwn + minApacheWorkers*apacheWorker); mem < least {
		return Computed{}, fmt.Errorf("%s of memory is less than the %dMi Apache needs for %d workers", memory.String(), least, minApacheWorkers)
	}
	workers := clamp((mem-apacheOwn)/apacheWorker, minApacheWorkers, maxApacheWorkers)
	return Computed{
		Settings:  []appsv1alpha1.TunedSetting{{Name: "MaxRequestWorkers", Value: strconv.FormatInt(workers, 10)}},
		WorstCase: apacheOwn + workers*apacheWorker,
	}, nil
}

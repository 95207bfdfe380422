package tuning

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestApacheRunsAsManyWorkersAsFitItsMemory(t *testing.T) {
	for _, tc := range []struct {
		memory  string
		workers int64
	}{
		{"144Mi", 2}, // the least that holds two
		{"256Mi", 4},
		{"512Mi", 11},
		{"1Gi", 24},
		{"16Gi", maxApacheWorkers},
	} {
		t.Run(tc.memory, func(t *testing.T) {
			q := resource.MustParse(tc.memory)
			s, err := ForApache(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Settings) != 1 || s.Settings[0].Name != "MaxRequestWorkers" {
				t.Fatalf("settings %+v, want MaxRequestWorkers alone", s.Settings)
			}
			workers, err := strconv.ParseInt(s.Settings[0].Value, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if workers != tc.workers {
				t.Errorf("MaxRequestWorkers %d, want %d", workers, tc.workers)
			}
			if s.WorstCase != apacheOwn+workers*apacheWorker || s.WorstCase > q.Value()>>20 {
				t.Errorf("worst case %d MiB for %d workers in %s", s.WorstCase, workers, tc.memory)
			}
		})
	}
}

func TestApacheIsNotTunedBelowTwoWorkers(t *testing.T) {
	_, err := ForApache(resource.MustParse("143Mi"))
	if err == nil || err.Error() != "143Mi of memory is less than the 144Mi Apache needs for 2 workers" {
		t.Errorf("error %v, want one naming the 144Mi two workers need", err)
	}
}

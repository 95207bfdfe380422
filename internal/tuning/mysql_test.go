package tuning

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

var profiles = []appsv1alpha1.TuningProfile{appsv1alpha1.ProfileMixed, appsv1alpha1.ProfileReadMostly, appsv1alpha1.ProfileWriteHeavy}

// valueMiB reads a computed setting back in MiB (a count for max_connections).
func valueMiB(t *testing.T, s Computed, name string) int64 {
	t.Helper()
	for _, setting := range s.Settings {
		if setting.Name == name {
			v, err := strconv.ParseInt(strings.TrimSuffix(setting.Value, "M"), 10, 64)
			if err != nil {
				t.Fatalf("%s=%s: %v", name, setting.Value, err)
			}
			return v
		}
	}
	t.Fatalf("no %s in %+v", name, s.Settings)
	return 0
}

func TestTheWorstCaseFitsTheMemoryAtEverySize(t *testing.T) {
	storage := resource.MustParse("10Gi")
	for _, memory := range []string{"256Mi", "300Mi", "512Mi", "768Mi", "1Gi", "1500Mi", "2Gi", "4Gi", "16Gi", "64Gi", "256Gi"} {
		for _, profile := range profiles {
			t.Run(memory+"/"+string(profile), func(t *testing.T) {
				q := resource.MustParse(memory)
				s, err := ForMySQL(q, storage, profile)
				if err != nil {
					t.Fatal(err)
				}
				pool, connections := valueMiB(t, s, "innodb_buffer_pool_size"), valueMiB(t, s, "max_connections")
				temp, redo := valueMiB(t, s, "tmp_table_size"), valueMiB(t, s, "innodb_log_file_size")
				instances := valueMiB(t, s, "loose-innodb_buffer_pool_instances")
				worst := globalBuffers + pool + (connections+adminReserved)*(sessionBuffers+temp)
				switch {
				case s.WorstCase != worst:
					t.Errorf("WorstCase %d MiB, want the sum %d MiB", s.WorstCase, worst)
				case worst > q.Value()>>20:
					t.Errorf("worst case %d MiB is more than the memory, %s", worst, memory)
				case pool < minPool || pool%(poolChunk*instances) != 0:
					t.Errorf("buffer pool %d MiB in %d instances, want whole chunks of %d MiB in each, and at least %d", pool, instances, poolChunk, minPool)
				case connections < minConnections || connections > maxConnections:
					t.Errorf("max_connections %d, want %d to %d", connections, minConnections, maxConnections)
				case redo > storage.Value()>>20/8:
					t.Errorf("redo log %d MiB, more than an eighth of the volume", redo)
				}
			})
		}
	}
}

func TestAGigabyteIsSizedAsTheDocsSay(t *testing.T) {
	s, err := ForMySQL(resource.MustParse("1Gi"), resource.MustParse("10Gi"), appsv1alpha1.ProfileMixed)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, setting := range s.Settings {
		got = append(got, setting.Name+"="+setting.Value)
	}
	want := "innodb_buffer_pool_size=528M max_connections=31 tmp_table_size=8M max_heap_table_size=8M innodb_log_file_size=132M " +
		"innodb_log_buffer_size=16M key_buffer_size=8M performance_schema=OFF loose-innodb_buffer_pool_chunk_size=8M " +
		"loose-innodb_buffer_pool_instances=1 loose-temptable_max_ram=248M loose-aria_pagecache_buffer_size=16M"
	if strings.Join(got, " ") != want || s.WorstCase != 1016 {
		t.Errorf("1Gi, Mixed: %s, worst case %d MiB; want %s, 1016 MiB", strings.Join(got, " "), s.WorstCase, want)
	}
}

func TestProfilesTradeThePoolForConnections(t *testing.T) {
	memory, storage := resource.MustParse("4Gi"), resource.MustParse("100Gi")
	pools := map[appsv1alpha1.TuningProfile]int64{}
	for _, profile := range profiles {
		s, err := ForMySQL(memory, storage, profile)
		if err != nil {
			t.Fatal(err)
		}
		pools[profile] = valueMiB(t, s, "innodb_buffer_pool_size")
	}
	if pools[appsv1alpha1.ProfileReadMostly] <= pools[appsv1alpha1.ProfileMixed] || pools[appsv1alpha1.ProfileMixed] <= pools[appsv1alpha1.ProfileWriteHeavy] {
		t.Errorf("buffer pools %v, want ReadMostly > Mixed > WriteHeavy", pools)
	}
}

func TestASmallVolumeBoundsTheRedoLog(t *testing.T) {
	s, err := ForMySQL(resource.MustParse("8Gi"), resource.MustParse("1Gi"), appsv1alpha1.ProfileWriteHeavy)
	if err != nil {
		t.Fatal(err)
	}
	if redo := valueMiB(t, s, "innodb_log_file_size"); redo != 128 {
		t.Errorf("redo log %d MiB on a 1Gi volume, want an eighth of it, 128", redo)
	}
}

func TestTooLittleMemoryIsNotSized(t *testing.T) {
	_, err := ForMySQL(resource.MustParse("255Mi"), resource.MustParse("1Gi"), appsv1alpha1.ProfileMixed)
	if err == nil || err.Error() != fmt.Sprintf("255Mi of memory is less than the %dMi a server needs to be sized", minMySQLMemory) {
		t.Errorf("ForMySQL(255Mi) = %v, want the minimum named", err)
	}
}

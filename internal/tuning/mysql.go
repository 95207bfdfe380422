package tuning

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// What mysqld holds whatever its settings, in MiB: the server's own memory (its code, caches of
// tables and privileges, the threads it starts with: about 90 MiB measured for MariaDB 10.11 with a
// small buffer pool), and the global buffers besides the pool, which the settings fix. MySQL's
// performance schema, which would take as much again, is turned off; MariaDB's is off already.
const (
	serverOwn     = 96
	keyBuffer     = 8
	ariaPagecache = 16
	redoBuffer    = 16
	globalBuffers = serverOwn + keyBuffer + ariaPagecache + redoBuffer
)

// sessionBuffers is what one connection can hold besides its temporary table, in MiB: the sort,
// join, read and random-read buffers, its thread's stack, its network buffers and binary log
// cache, at the servers' defaults (2 MiB, 256 KiB, 128 KiB, 256 KiB, 292 KiB, 2 × 16 KiB,
// 32 KiB), rounded up.
const sessionBuffers = 3

// Bounds of the computed values.
const (
	// minMySQLMemory is the least memory a MySQL is tuned for: below it, ten connections and a
	// 32 MiB buffer pool do not fit beside the server's own.
	minMySQLMemory = 256
	minPool        = 32
	minConnections = 10
	maxConnections = 4000
	minTempTable   = 4
	maxTempTable   = 16
	minRedo        = 48
	maxRedo        = 2048
	// MySQL sizes its buffer pool in whole chunks of every instance, rounding up; MariaDB takes
	// the size as given. One instance below a GiB, eight above, of 8 MiB chunks.
	poolChunk     = 8
	poolsAbove    = 1024
	manyPools     = 8
	adminReserved = 1 // the connection both servers keep beyond max_connections for an administrator
)

// mysqlSizes are the computed sizes, in MiB, and counts.
type mysqlSizes struct {
	pool, instances, connections, tempTable, redo int64
}

// ForMySQL computes mysqld's memory settings for a container of the given memory and a data volume
// of the given size. It fails, saying why, when the memory is too little to size.
func ForMySQL(memory, storage resource.Quantity, profile appsv1alpha1.TuningProfile) (Computed, error) {
	mem := memory.Value() / mib
	if mem < minMySQLMemory {
		return Computed{}, fmt.Errorf("%s of memory is less than the %dMi a server needs to be sized", memory.String(), minMySQLMemory)
	}
	poolShare, redoDivisor := shares(profile)
	z := mysqlSizes{tempTable: clamp(mem/128, minTempTable, maxTempTable)}
	perConnection := sessionBuffers + z.tempTable
	budget := mem - globalBuffers
	z.pool, z.instances = roundPool(budget * poolShare / 100)
	z.connections = (budget-z.pool)/perConnection - adminReserved
	if z.connections < minConnections || z.connections > maxConnections {
		z.connections = clamp(z.connections, minConnections, maxConnections)
		z.pool, z.instances = roundPool(budget - (z.connections+adminReserved)*perConnection)
	}
	z.redo = clamp(z.pool/redoDivisor, minRedo, maxRedo)
	if volumeBound := storage.Value() / mib / 8; z.redo > volumeBound {
		// The redo log must leave the data most of the volume.
		z.redo = max(volumeBound, 1)
	}
	return Computed{
		Settings:  z.settings(),
		WorstCase: globalBuffers + z.pool + (z.connections+adminReserved)*perConnection,
	}, nil
}

// settings are the sizes as my.cnf lines.
func (z mysqlSizes) settings() []appsv1alpha1.TunedSetting {
	megabytes := func(v int64) string { return strconv.FormatInt(v, 10) + "M" }
	return []appsv1alpha1.TunedSetting{
		{Name: "innodb_buffer_pool_size", Value: megabytes(z.pool)},
		{Name: "max_connections", Value: strconv.FormatInt(z.connections, 10)},
		{Name: "tmp_table_size", Value: megabytes(z.tempTable)},
		{Name: "max_heap_table_size", Value: megabytes(z.tempTable)},
		{Name: "innodb_log_file_size", Value: megabytes(z.redo)},
		{Name: "innodb_log_buffer_size", Value: megabytes(redoBuffer)},
		{Name: "key_buffer_size", Value: megabytes(keyBuffer)},
		{Name: "performance_schema", Value: "OFF"},
		{Name: "loose-innodb_buffer_pool_chunk_size", Value: megabytes(poolChunk)},
		// Each server ignores the other's options with a warning: MySQL's pool instances and its
		// shared pool of in-memory temporary tables, MariaDB's Aria page cache, which holds its
		// on-disk temporary tables.
		{Name: "loose-innodb_buffer_pool_instances", Value: strconv.FormatInt(z.instances, 10)},
		{Name: "loose-temptable_max_ram", Value: megabytes(max(z.connections*z.tempTable, 2))},
		{Name: "loose-aria_pagecache_buffer_size", Value: megabytes(ariaPagecache)},
	}
}

// roundPool rounds a buffer pool down to whole chunks of every instance, and says how many.
func roundPool(size int64) (pool, instances int64) {
	instances = 1
	if size >= poolsAbove {
		instances = manyPools
	}
	step := poolChunk * instances
	return max(size/step*step, minPool), instances
}

// shares are the percentage of the memory left once the global buffers are set aside that the
// buffer pool gets, and the part of the buffer pool the redo log is.
func shares(profile appsv1alpha1.TuningProfile) (poolPercent, redoDivisor int64) {
	switch profile {
	case appsv1alpha1.ProfileReadMostly:
		return 75, 8
	case appsv1alpha1.ProfileWriteHeavy:
		return 50, 2
	default:
		return 60, 4
	}
}

package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// manifestFormatVersion is the version of the manifest's format and of the checksum function
// its tables were computed with; verify refuses a manifest it does not know.
const manifestFormatVersion = 1

// maxManifestSize bounds what is read as a manifest: a table takes about 150 bytes, so this is
// hundreds of thousands of tables.
const maxManifestSize = 64 << 20

// manifest describes a complete backup. It is written after the artifact, so that its presence
// means the artifact is whole.
type manifest struct {
	FormatVersion int    `json:"formatVersion"`
	Key           string `json:"key"`
	Artifact      string `json:"artifact"`
	Size          int64  `json:"size"`
	SHA256        string `json:"sha256"`
	Encrypted     bool   `json:"encrypted"`
	// Compression of the SQL in the artifact: "gzip".
	Compression    string `json:"compression"`
	ServerVersion  string `json:"serverVersion"`
	BinlogPosition string `json:"binlogPosition,omitempty"`
	GTIDPosition   string `json:"gtidPosition,omitempty"`
	// BinlogArchive is the key of the archive of the server's binary log in the same storage,
	// when one was kept: a replay after this backup reads it.
	BinlogArchive string          `json:"binlogArchive,omitempty"`
	Created       time.Time       `json:"created"`
	Databases     []string        `json:"databases"`
	Tables        []tableChecksum `json:"tables"`
}

// result is the Result that reports the backup described by m.
func (m *manifest) result() Result {
	return Result{
		Key: m.Key, Artifact: m.Artifact, Size: m.Size, SHA256: m.SHA256, Encrypted: m.Encrypted,
		ServerVersion: m.ServerVersion, BinlogPosition: m.BinlogPosition, GTIDPosition: m.GTIDPosition,
		Databases: len(m.Databases), Tables: len(m.Tables),
	}
}

// stored is what the manifest says was stored of the artifact.
func (m *manifest) stored() stored { return stored{size: m.Size, sha256: m.SHA256} }

func writeManifest(ctx context.Context, store storage, m *manifest) error {
	return putJSON(ctx, store, manifestKey(m.Key), m)
}

// readManifest reads the manifest of the backup at key. Its artifact is read at key too, not at
// the key the manifest was written with, so that a backup copied under another prefix restores.
func readManifest(ctx context.Context, store storage, key string) (*manifest, error) {
	var m manifest
	if err := getJSON(ctx, store, key, manifestKey(key), &m); err != nil {
		return nil, err
	}
	if m.FormatVersion != manifestFormatVersion {
		return nil, fmt.Errorf("the manifest %s has format version %d; this binary reads version %d",
			manifestKey(key), m.FormatVersion, manifestFormatVersion)
	}
	return &m, nil
}

// putJSON stores v as indented JSON at object.
func putJSON(ctx context.Context, store storage, object string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	return store.put(ctx, object, bytes.NewReader(data), int64(len(data)))
}

// getJSON reads the manifest object of the backup at key into v.
func getJSON(ctx context.Context, store storage, key, object string, v any) error {
	r, err := store.get(ctx, object)
	if errors.Is(err, errNotFound) {
		return fmt.Errorf("there is no complete backup at %s: its manifest %s does not exist", key, object)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxManifestSize+1))
	if err != nil {
		return fmt.Errorf("cannot read the manifest %s: %w", object, err)
	}
	if len(data) > maxManifestSize {
		return fmt.Errorf("the manifest %s is larger than %d bytes", object, maxManifestSize)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("the manifest %s is not valid JSON: %w", object, err)
	}
	return nil
}

// contentManifestFormatVersion is the version of a content manifest's format; extract refuses a
// manifest it does not know.
const contentManifestFormatVersion = 1

// contentManifest describes a complete content backup, a folder's archive. It is written after
// the artifact, so that its presence means the artifact is whole.
type contentManifest struct {
	FormatVersion int    `json:"formatVersion"`
	Key           string `json:"key"`
	Artifact      string `json:"artifact"`
	Size          int64  `json:"size"`
	SHA256        string `json:"sha256"`
	Encrypted     bool   `json:"encrypted"`
	// Format of the artifact: "tar", compressed with Compression, "gzip".
	Format      string `json:"format"`
	Compression string `json:"compression"`
	// Files is the number of regular files archived; Bytes is their total size.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Created is when the archive began: the folder is read as it is while it is walked.
	Created time.Time `json:"created"`
}

func (m *contentManifest) result() Result {
	return Result{
		Key: m.Key, Artifact: m.Artifact, Size: m.Size, SHA256: m.SHA256, Encrypted: m.Encrypted,
		Files: m.Files, Bytes: m.Bytes,
	}
}

func (m *contentManifest) stored() stored { return stored{size: m.Size, sha256: m.SHA256} }

// readContentManifest reads the manifest of the content backup at key.
func readContentManifest(ctx context.Context, store storage, key string) (*contentManifest, error) {
	var m contentManifest
	if err := getJSON(ctx, store, key, contentManifestKey(key), &m); err != nil {
		return nil, err
	}
	if m.FormatVersion != contentManifestFormatVersion {
		return nil, fmt.Errorf("the manifest %s has format version %d; this binary reads version %d",
			contentManifestKey(key), m.FormatVersion, contentManifestFormatVersion)
	}
	return &m, nil
}

// contentObjects are the objects of the content backup at key, its manifest first.
func contentObjects(key string) []string {
	return []string{contentManifestKey(key), contentArtifactKey(key, false), contentArtifactKey(key, true)}
}

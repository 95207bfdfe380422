package backup

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// pruneArchive deletes the files of the archive at root that no kept backup needs: a replay
// starts from a backup, so the transactions before the oldest backup that names this archive,
// among those in the folder the archive lies in, are never replayed. Only whole files go (a
// file's first piece holds what the others are read with), and never a session's last file,
// which its shipper may still be writing. It returns how many pieces it deleted.
func pruneArchive(ctx context.Context, store storage, root string, domain uint32, pieces []binlog.Piece) (int, error) {
	keep, found, err := oldestBaseSeq(ctx, store, root, domain)
	if err != nil || !found {
		return 0, err
	}
	bySession := map[string]map[string][]binlog.Piece{}
	for _, p := range pieces {
		if bySession[p.Session] == nil {
			bySession[p.Session] = map[string][]binlog.Piece{}
		}
		bySession[p.Session][p.File] = append(bySession[p.Session][p.File], p)
	}
	deleted := 0
	for _, files := range bySession {
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names[:len(names)-1] {
			if newestSeq(files[name]) > keep {
				break
			}
			for _, p := range files[name] {
				if err := store.delete(ctx, root+"/"+p.Key()); err != nil {
					return deleted, err
				}
				deleted++
			}
		}
	}
	return deleted, nil
}

func newestSeq(pieces []binlog.Piece) uint64 {
	var newest uint64
	for _, p := range pieces {
		newest = max(newest, p.LastSeq)
	}
	return newest
}

// oldestBaseSeq is the lowest sequence number of domain held by a backup whose manifest, in the
// folder two levels above the archive's root (<prefix><namespace>/<mysql> for the root
// <prefix><namespace>/<mysql>/binlog/<uid>), names the archive.
func oldestBaseSeq(ctx context.Context, store storage, root string, domain uint32) (uint64, bool, error) {
	folder := path.Dir(path.Dir(root))
	keys, err := store.listFolder(ctx, folder)
	if err != nil {
		return 0, false, err
	}
	var oldest uint64
	found := false
	for _, key := range keys {
		name, ok := strings.CutSuffix(key, manifestExtension)
		if !ok {
			continue
		}
		m, err := readManifest(ctx, store, name)
		if err != nil || m.BinlogArchive != root || m.BinlogPosition == "" {
			continue // another kind of manifest, or a backup of no use to this archive
		}
		position, err := binlog.ParsePosition(m.GTIDPosition)
		if err != nil {
			continue
		}
		if seq := binlog.SeqIn(position, domain); !found || seq < oldest {
			oldest, found = seq, true
		}
	}
	return oldest, found, nil
}

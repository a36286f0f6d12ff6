package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrBadListing marks a Hub API answer that fails validation.
var ErrBadListing = errors.New("invalid Hub listing")

// Limits on a listing, so a hostile answer cannot exhaust memory or disk.
const (
	maxListingBytes = 16 << 20
	maxFiles        = 10000
	maxFileSize     = 1 << 40 // 1 TiB per file
)

// RemoteFile is one file of a revision, validated.
type RemoteFile struct {
	Path string // safe relative path (CheckRelPath)
	Size int64
	// Blob is the cache blob name: the LFS sha256 (64 hex) for LFS files,
	// else the git blob sha1 (40 hex).
	Blob string
	LFS  bool
}

// Listing is a revision's file list as the Hub reports it.
type Listing struct {
	Repo   Repo
	Commit string // 40 hex; the snapshot folder name
	Files  []RemoteFile
}

// TotalSize is the sum of the files' sizes.
func (l *Listing) TotalSize() int64 {
	var n int64
	for _, f := range l.Files {
		n += f.Size
	}
	return n
}

// WeightBytes is the size of the revision's safetensors files.
func (l *Listing) WeightBytes() int64 {
	var n int64
	for _, f := range l.Files {
		if strings.HasSuffix(f.Path, ".safetensors") {
			n += f.Size
		}
	}
	return n
}

// File returns the named file.
func (l *Listing) File(path string) (RemoteFile, bool) {
	for _, f := range l.Files {
		if f.Path == path {
			return f, true
		}
	}
	return RemoteFile{}, false
}

// listingJSON is /api/models/{repo}/revision/{rev}?blobs=true.
type listingJSON struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		BlobID    string `json:"blobId"`
		Size      *int64 `json:"size"`
		LFS       *struct {
			SHA256 string `json:"sha256"`
			OID    string `json:"oid"` // the tree API's spelling
			Size   *int64 `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

// ParseListing validates a revision listing: a 40-hex commit, and for every
// file a safe path, a non-negative size, and a well-formed hash. Nothing is
// created on disk before this succeeds.
func ParseListing(repo Repo, data []byte) (*Listing, error) {
	if len(data) > maxListingBytes {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrBadListing, len(data), maxListingBytes)
	}
	var raw listingJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadListing, err)
	}
	if !isHex(raw.SHA, 40) {
		return nil, fmt.Errorf("%w: commit %q is not 40 hex digits", ErrBadListing, truncate(raw.SHA, 50))
	}
	if len(raw.Siblings) > maxFiles {
		return nil, fmt.Errorf("%w: %d files (limit %d)", ErrBadListing, len(raw.Siblings), maxFiles)
	}
	l := &Listing{Repo: repo, Commit: raw.SHA}
	seen := map[string]bool{}
	for _, s := range raw.Siblings {
		if err := CheckRelPath(s.RFilename); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadListing, err)
		}
		key := strings.ToLower(s.RFilename) // case-insensitive file systems (macOS)
		if seen[key] {
			return nil, fmt.Errorf("%w: file %q listed twice", ErrBadListing, s.RFilename)
		}
		seen[key] = true
		f := RemoteFile{Path: s.RFilename}
		if s.LFS != nil {
			sum := s.LFS.SHA256
			if sum == "" {
				sum = strings.TrimPrefix(s.LFS.OID, "sha256:")
			}
			if !isHex(sum, 64) {
				return nil, fmt.Errorf("%w: %s: LFS sha256 %q is not 64 hex digits", ErrBadListing, s.RFilename, truncate(sum, 70))
			}
			if s.LFS.Size == nil {
				return nil, fmt.Errorf("%w: %s: LFS size missing", ErrBadListing, s.RFilename)
			}
			f.Blob, f.LFS, f.Size = sum, true, *s.LFS.Size
		} else {
			if !isHex(s.BlobID, 40) {
				return nil, fmt.Errorf("%w: %s: blob id %q is not 40 hex digits", ErrBadListing, s.RFilename, truncate(s.BlobID, 50))
			}
			if s.Size == nil {
				return nil, fmt.Errorf("%w: %s: size missing", ErrBadListing, s.RFilename)
			}
			f.Blob, f.Size = s.BlobID, *s.Size
		}
		if f.Size < 0 || f.Size > maxFileSize {
			return nil, fmt.Errorf("%w: %s: size %d out of range", ErrBadListing, s.RFilename, f.Size)
		}
		l.Files = append(l.Files, f)
	}
	if err := checkPathPrefixes(l.Files); err != nil {
		return nil, err
	}
	return l, nil
}

// checkPathPrefixes refuses a listing where one file is a folder of
// another ("a" and "a/b"), which cannot both exist on disk.
func checkPathPrefixes(files []RemoteFile) error {
	names := map[string]bool{}
	for _, f := range files {
		names[strings.ToLower(f.Path)] = true
	}
	for _, f := range files {
		p := strings.ToLower(f.Path)
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && names[p[:i]] {
				return fmt.Errorf("%w: %q is both a file and a folder", ErrBadListing, f.Path[:i])
			}
		}
	}
	return nil
}

// ShardIndex is model.safetensors.index.json.
type ShardIndex struct {
	WeightMap map[string]string // tensor name → shard file (validated)
}

// Shards returns the distinct shard files in sorted order.
func (x *ShardIndex) Shards() []string {
	set := map[string]bool{}
	for _, f := range x.WeightMap {
		set[f] = true
	}
	return sortedKeys(set)
}

const maxIndexBytes = 64 << 20

// ParseShardIndex validates an index: every weight_map value must be a safe
// relative path naming a .safetensors file.
func ParseShardIndex(data []byte) (*ShardIndex, error) {
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("shard index: %d bytes (limit %d)", len(data), maxIndexBytes)
	}
	var raw struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("shard index: %v", err)
	}
	if len(raw.WeightMap) == 0 {
		return nil, errors.New("shard index: weight_map is empty")
	}
	for tensor, file := range raw.WeightMap {
		if err := CheckRelPath(file); err != nil {
			return nil, fmt.Errorf("shard index: tensor %q: %w", truncate(tensor, 80), err)
		}
		if !strings.HasSuffix(file, ".safetensors") {
			return nil, fmt.Errorf("shard index: tensor %q: %q is not a .safetensors file", truncate(tensor, 80), truncate(file, 80))
		}
	}
	return &ShardIndex{WeightMap: raw.WeightMap}, nil
}

// Package contenthash names bytes by their content: the SHA-256 in hex
// that attachments are stored, cached and prepared by. Perch hashes an
// attachment once, where it enters (attached, or read from a request), and
// passes the name along (prompt.Part.Hash); every hash goes through Of, so
// walk tests count them.
package contenthash

import (
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
)

var count atomic.Int64

// Of is data's SHA-256 in lower-case hex.
func Of(data []byte) string {
	count.Add(1)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Count is how many times this process has hashed content with Of: walk
// tests count the hashes one flow makes.
func Count() int64 { return count.Load() }

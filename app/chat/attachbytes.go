package chat

// attachmentCacheBytes bounds the attachment bytes a service keeps between
// turns: a conversation's photos and clips are read from disk (and their
// hash checked) once, not again on every turn that resends them.
const attachmentCacheBytes = 64 << 20

// readAttachment returns an attachment's bytes by content hash. Blobs are
// content-addressed, so a kept copy is never stale.
func (s *Service) readAttachment(sha string) ([]byte, error) {
	if data, ok := s.attachments.Get(sha); ok {
		return data, nil
	}
	s.blobReads.Add(1)
	data, err := s.store.ReadBlob(sha)
	if err == nil {
		s.attachments.Put(sha, data, int64(len(data)))
	}
	return data, err
}

// Package hub owns the Hugging Face cache on this machine: its layout
// and names (models--org--name/{blobs,snapshots,refs}, .locks/), reading
// it (List, Snapshot, Remove), filling it from the Hub (Pull: listing,
// resumable verified blob downloads, links, refs), and the gate a pull
// passes before its first weight byte: whether the checkpoint fits this
// machine's memory (Fit, EstimateMemory: the engine's own
// gemma4.Description.Memory at a context length, held against
// MachineBudget), with the curated list Perch offers (Catalog). Models
// fetched by mlx-lm, mlx-vlm or the hf CLI are reused as they are.
//
// Exported API (used by the CLI verbs and the GUI's models view):
//
//	h := hub.New()  // HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH, HF_HUB_OFFLINE
//	dir, err := h.Pull(ctx, "mlx-community/gemma-4-e2b-it-4bit", "main", func(p hub.Progress) {...})
//	dir, err := h.PullWith(ctx, repo, rev, hub.PullOptions{Update, Context, SkipFit}, progress)
//	models, err := h.List()                  // []CachedModel: repo, refs, commit, dir, size, family, modalities
//	err = h.Remove("org/name")               // whole repo; refused while a pull holds its lock
//	dir, err := h.Snapshot(repo, rev)        // cached, complete snapshot; never touches the network
//	est, label, err := h.Fit(ctx, "REPO[@REV]"|"DIR", contextLen)
//	est, err := h.FitDir(dir, n) / h.FitRemote(ctx, repo, rev, n)
//	est, err := hub.EstimateMemory(configJSON, hub.Weights{...}, n, hub.Budget{...})
//	b, err := hub.MachineBudget()            // RAM, and Metal's working set on macOS
//	hub.Catalog(), hub.DefaultModel(), hub.CatalogEntryFor(repo), entry.RAMNeeded(n)
//	hub.ParseRepo, hub.ParseRef("org/name@rev"), hub.CheckRevision, hub.CheckRelPath
//	hub.ParseListing, hub.ParseShardIndex    // validators for bytes from the network
//
// Errors: ErrOffline, ErrNotCached, ErrNotFound, ErrAuth, ErrChecksum,
// ErrDiskFull, ErrInProgress, ErrUnsafeName, ErrBadListing, and
// ErrDoesNotFit (as *FitError, whose message names a smaller choice).
//
// A pull: a complete cached snapshot returns at once with no request
// (unless PullOptions.Update). Otherwise it takes an flock on
// .locks/models--org--name/perch-pull.lock (a second pull of the same repo
// waits, reporting StageWaiting), lists the revision through
// /api/models/{repo}/revision/{rev}?blobs=true, validates every name and
// hash before touching the disk, checks free disk space, downloads
// config.json and runs the fit check before the first weight byte, then
// fetches each file through /{repo}/resolve/{commit}/{path}: redirects are
// followed by hand and the token is sent only to the Hub's own host, a
// partial <blob>.incomplete is re-hashed and resumed with Range, a stalled
// body is abandoned after IdleTimeout, transient failures retry up to
// MaxAttempts, and a blob is renamed into blobs/ only after its sha256 (LFS)
// or git blob sha1 matches. A checksum mismatch or a full disk removes the
// partial file; a dropped connection or a cancel keeps it for the next pull.
// The snapshot gets relative symlinks into blobs/, and refs/<rev> is
// written last.
//
// The fit check sums safetensors tensor bytes (listing sizes before a
// download), adds the KV cache at the context length (donor layers only,
// sliding layers capped at the window; every field read from config.json),
// the peak working set (a prefill chunk with unfused attention scores, or
// a tower's encoder pass at the default image budget) and a fixed runtime
// allowance, and compares the total with the machine's budget.
package hub

package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Uploader uploads one subtask's successive Pebble checkpoints to
// checkpoint storage, incrementally: an SST file is immutable in Pebble, so
// once it is safely in storage later checkpoints refer to the same key
// instead of uploading it again. Every other file (MANIFEST, OPTIONS,
// markers) is small and changes, so it is uploaded each time under the
// checkpoint's private prefix.
//
// An Uploader belongs to one subtask attempt and lives as long as it does.
// It is not safe for concurrent use.
type Uploader struct {
	// Full, when set, makes Upload reuse nothing and put every file under
	// its privatePrefix: a savepoint is then self-contained and owned by
	// the user, and no checkpoint depends on its files.
	Full bool

	st           *Storage
	sharedPrefix string
	// token is random per Uploader, so two attempts of a subtask (or two
	// job managers' worth of confused task managers) never write the same
	// shared key.
	token string
	// seq numbers Upload calls. A new SST goes under a key that includes
	// it, so an SST uploaded again (its first upload never confirmed) gets
	// a fresh key, never one the coordinator may be deleting.
	seq int
	// reusable maps a local SST name to its copy in storage, for the SSTs
	// of the handle last given to Seed.
	reusable map[string]FileRef
}

// NewUploader returns an uploader into st that puts SST files under
// sharedPrefix (e.g. "shared"): the key of an SST is
// sharedPrefix/<random token>-<upload sequence>/<local name>.
func NewUploader(st *Storage, sharedPrefix string) *Uploader {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("checkpoint: crypto/rand: %v", err)) // rand.Read does not fail on supported platforms
	}
	return &Uploader{
		st:           st,
		sharedPrefix: strings.TrimSuffix(sharedPrefix, "/"),
		token:        hex.EncodeToString(b[:]),
		reusable:     map[string]FileRef{},
	}
}

// Seed tells the uploader which SSTs are safely in storage: an SST of a
// later Upload with the same local name and size is then reused rather
// than uploaded. Seed replaces what an earlier Seed said.
//
// Call it with the handle a restored subtask started from, and again with
// the handle of each of this subtask's checkpoints once the subtask is
// notified that the checkpoint completed. NB: only a completed checkpoint's
// files are safe to reuse: the coordinator deletes the files of an aborted
// checkpoint, and those of a subsumed one that no retained checkpoint
// references. Only keys under the shared prefix are reused, so files of a
// savepoint (user-owned, under its own directory) never are.
func (u *Uploader) Seed(h *BackendHandle) {
	u.reusable = map[string]FileRef{}
	if h == nil {
		return
	}
	for _, f := range h.Files {
		if strings.HasSuffix(f.Name, ".sst") && strings.HasPrefix(f.Key, u.sharedPrefix+"/") {
			u.reusable[f.Name] = f
		}
	}
}

// Upload uploads the Pebble checkpoint in localDir and returns the handle
// of all its files, in name order, and the number of bytes it actually
// uploaded: with no new SSTs that is only the small private files. Files
// other than reused SSTs go under privatePrefix + "/" + name (SSTs too when
// Full is set). The uploader does not remove localDir. Successive calls
// must not overlap.
func (u *Uploader) Upload(ctx context.Context, localDir, privatePrefix string) (h *BackendHandle, uploaded int64, err error) {
	entries, err := os.ReadDir(localDir)
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint upload: %v", err)
	}
	u.seq++
	privatePrefix = strings.TrimSuffix(privatePrefix, "/")
	sharedDir := u.sharedPrefix + "/" + u.token + "-" + strconv.Itoa(u.seq)
	h = &BackendHandle{}
	// puts are the files to upload, by their index in h.Files.
	type put struct {
		i         int
		path, key string
	}
	var puts []put
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		info, err := e.Info()
		if err != nil {
			return nil, 0, fmt.Errorf("checkpoint upload: %v", err)
		}
		sst := strings.HasSuffix(name, ".sst")
		if f, ok := u.reusable[name]; ok && sst && !u.Full && f.Size == info.Size() {
			h.Files = append(h.Files, f)
			continue
		}
		key := privatePrefix + "/" + name
		if sst && !u.Full {
			key = sharedDir + "/" + name
		}
		puts = append(puts, put{i: len(h.Files), path: filepath.Join(localDir, name), key: key})
		h.Files = append(h.Files, FileRef{Name: name})
	}
	// NB: files go up uploadConcurrency at a time: one stream at a time
	// leaves object storage's latency, not its bandwidth, as the limit.
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, uploadConcurrency)
		errs = make([]error, len(puts))
	)
	for j, p := range puts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := u.put(ctx, p.path, p.key)
			if err != nil {
				errs[j] = err
				return
			}
			f.Name = h.Files[p.i].Name
			h.Files[p.i] = f
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	for _, p := range puts {
		uploaded += h.Files[p.i].Size
	}
	if len(h.Files) == 0 {
		return nil, 0, fmt.Errorf("checkpoint upload: %s holds no files", localDir)
	}
	return h, uploaded, nil
}

// uploadConcurrency bounds the files one Upload sends at once.
const uploadConcurrency = 4

func (u *Uploader) put(ctx context.Context, path, key string) (FileRef, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileRef{}, fmt.Errorf("checkpoint upload: %v", err)
	}
	defer f.Close()
	size, crc, err := u.st.Put(ctx, key, f)
	if err != nil {
		return FileRef{}, err
	}
	return FileRef{Key: key, Size: size, CRC32C: crc}, nil
}

// Download fetches every file of h into localDir, creating it, and
// verifies each file's size and CRC-32C. An error names the file and its
// storage URI. A file is written under a temporary name, synced and only
// then renamed, so a partial or unverified file is never left under its
// real name; on error the caller should still discard localDir, since the
// files before the failing one are complete but the set is not.
func Download(ctx context.Context, st *Storage, h *BackendHandle, localDir string) error {
	if h == nil {
		return errors.New("checkpoint download: no backend handle")
	}
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return fmt.Errorf("checkpoint download: %v", err)
	}
	names := make([]string, 0, len(h.Files))
	for _, f := range h.Files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return fmt.Errorf("checkpoint download: file %s appears twice in the handle", names[i])
		}
	}
	for _, f := range h.Files {
		if err := download(ctx, st, f, localDir); err != nil {
			return err
		}
	}
	return nil
}

func download(ctx context.Context, st *Storage, f FileRef, localDir string) (err error) {
	// NB: the name comes from a manifest in storage; a name with a
	// separator or ".." must not write outside localDir.
	if f.Name == "" || f.Name == "." || f.Name == ".." || strings.ContainsAny(f.Name, `/\`) {
		return fmt.Errorf("checkpoint file %q (%s): invalid name", f.Name, st.Resolve(f.Key))
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint file %s (%s): %s", f.Name, st.Resolve(f.Key), fmt.Sprintf(format, args...))
	}
	r, err := st.Get(ctx, f.Key)
	if err != nil {
		return fail("%v", err)
	}
	defer r.Close()
	tmp, err := os.CreateTemp(localDir, f.Name+".*.partial")
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := crc32.New(castagnoli)
	// Read one byte more than expected to tell a longer object from a
	// matching one.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, f.Size+1))
	if err != nil {
		return fail("%v", err)
	}
	if n != f.Size {
		if n > f.Size {
			return fail("longer than the %d bytes recorded", f.Size)
		}
		return fail("truncated: %d of %d bytes", n, f.Size)
	}
	if got := h.Sum32(); got != f.CRC32C {
		return fail("checksum mismatch: crc32c %08x, recorded %08x", got, f.CRC32C)
	}
	if err := tmp.Sync(); err != nil {
		return fail("%v", err)
	}
	if err := tmp.Close(); err != nil {
		return fail("%v", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(localDir, f.Name)); err != nil {
		return fail("%v", err)
	}
	return nil
}

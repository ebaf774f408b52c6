package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// castagnoli is the CRC-32C table every checksum in this package uses.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Storage is checkpoint storage: a local directory or an S3-compatible
// bucket prefix, seen as a flat space of slash-separated keys. It is safe for
// concurrent use.
type Storage struct {
	bucket *blob.Bucket
	// uri is the normalised base URI without credentials: file:///abs/dir
	// or s3://bucket/prefix?endpoint=...&region=...&use_path_style=true.
	uri string
	// local is true for fileblob, whose temporary files List must skip;
	// dir is then its directory.
	local bool
	dir   string
}

// StorageError is an error of checkpoint storage. Its class is always
// external: the store (a disk, S3) failed or refused, not Braid.
type StorageError struct {
	URI string // the storage's base URI
	Op  string // get, put, delete, list, open
	Key string // the key or prefix, if any
	Err error
}

func (e *StorageError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("checkpoint storage %s: %s: %v", e.URI, e.Op, e.Err)
	}
	return fmt.Sprintf("checkpoint storage %s: %s %s: %v", e.URI, e.Op, e.Key, e.Err)
}

func (e *StorageError) Unwrap() error { return e.Err }

// Class says who caused the failure, for the restart policy.
func (e *StorageError) Class() braidv1.ErrorClass { return braidv1.ErrorClass_ERROR_CLASS_EXTERNAL }

// URI parameters of s3:// storage that OpenStorage understands.
const (
	paramEndpoint     = "endpoint"
	paramRegion       = "region"
	paramUsePathStyle = "use_path_style"
	paramAccessKeyID  = "access_key_id"
	paramSecretKey    = "secret_access_key"
)

// OpenStorage opens checkpoint storage at uri: an absolute path or
// file:///abs/dir (created if missing), or s3://bucket/prefix with the query
// parameters endpoint=, region= and use_path_style=true. S3 credentials come
// from the standard AWS environment variables and configuration files, or
// from the access_key_id= and secret_access_key= parameters (meant for
// tests; URI never repeats them). Keys are relative to the URI's directory
// or prefix. The context is used only while opening.
func OpenStorage(ctx context.Context, uri string) (*Storage, error) {
	if strings.HasPrefix(uri, "/") {
		uri = "file://" + uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, &StorageError{URI: uri, Op: "open", Err: err}
	}
	switch u.Scheme {
	case "file":
		return openFile(u)
	case "s3":
		return openS3(ctx, u)
	default:
		return nil, &StorageError{URI: uri, Op: "open", Err: fmt.Errorf("unsupported scheme %q (want an absolute path, file:// or s3://)", u.Scheme)}
	}
}

func openFile(u *url.URL) (*Storage, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, &StorageError{URI: u.String(), Op: "open", Err: fmt.Errorf("file URI with host %q: want file:///abs/dir", u.Host)}
	}
	if len(u.Query()) > 0 {
		return nil, &StorageError{URI: u.String(), Op: "open", Err: errors.New("file URI takes no query parameters")}
	}
	dir := filepath.Clean(u.Path)
	if !filepath.IsAbs(dir) {
		return nil, &StorageError{URI: u.String(), Op: "open", Err: fmt.Errorf("path %q is not absolute", u.Path)}
	}
	base := (&url.URL{Scheme: "file", Path: dir}).String()
	// NB: NoTempDir writes the temporary file beside its final name, so
	// the rename that publishes it never crosses file systems; List skips
	// those temporaries.
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{
		CreateDir: true,
		NoTempDir: true,
		Metadata:  fileblob.MetadataDontWrite,
	})
	if err != nil {
		return nil, &StorageError{URI: base, Op: "open", Err: err}
	}
	return &Storage{bucket: b, uri: base, local: true, dir: dir}, nil
}

func openS3(ctx context.Context, u *url.URL) (*Storage, error) {
	q := u.Query()
	bucketName := u.Host
	prefix := strings.Trim(u.Path, "/")
	kept := url.Values{}
	var endpoint, region, keyID, secret string
	pathStyle := false
	for k, vs := range q {
		v := vs[0]
		switch k {
		case paramEndpoint:
			endpoint = v
			kept.Set(k, v)
		case paramRegion:
			region = v
			kept.Set(k, v)
		case paramUsePathStyle:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, &StorageError{URI: redacted(u), Op: "open", Err: fmt.Errorf("%s=%q: %v", k, v, err)}
			}
			pathStyle = b
			kept.Set(k, strconv.FormatBool(b))
		case paramAccessKeyID:
			keyID = v
		case paramSecretKey:
			secret = v
		default:
			return nil, &StorageError{URI: redacted(u), Op: "open", Err: fmt.Errorf("unknown parameter %q", k)}
		}
	}
	base := (&url.URL{Scheme: "s3", Host: bucketName, Path: "/" + prefix, RawQuery: kept.Encode()}).String()
	if prefix == "" {
		base = (&url.URL{Scheme: "s3", Host: bucketName, RawQuery: kept.Encode()}).String()
	}
	if bucketName == "" {
		return nil, &StorageError{URI: base, Op: "open", Err: errors.New("no bucket name")}
	}
	if (keyID == "") != (secret == "") {
		return nil, &StorageError{URI: base, Op: "open", Err: errors.New("access_key_id and secret_access_key go together")}
	}
	opts := []func(*awsconfig.LoadOptions) error{
		// NB: S3-compatible stores do not all accept the SDK's default
		// trailing checksums; ours is CRC-32C over the content anyway.
		awsconfig.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		awsconfig.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	if keyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(keyID, secret, "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, &StorageError{URI: base, Op: "open", Err: err}
	}
	if cfg.Region == "" {
		// An S3-compatible store usually ignores the region, but the SDK
		// refuses to sign without one.
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	b, err := s3blob.OpenBucket(ctx, client, bucketName, &s3blob.Options{
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	if err != nil {
		return nil, &StorageError{URI: base, Op: "open", Err: err}
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix+"/")
	}
	return &Storage{bucket: b, uri: base}, nil
}

// redacted is u without credential parameters, for error messages.
func redacted(u *url.URL) string {
	c := *u
	q := c.Query()
	q.Del(paramAccessKeyID)
	q.Del(paramSecretKey)
	c.RawQuery = q.Encode()
	return c.String()
}

// URI returns the storage's normalised base URI, without credentials.
// OpenStorage(URI()) opens the same storage when credentials come from the
// environment.
func (s *Storage) URI() string { return s.uri }

// Resolve returns the absolute URI of key: the base URI with the key as
// its fragment, as in s3://b/p?region=r#chk-3/_metadata or
// file:///data/ckpt#chk-3/_metadata. A fragment, rather than base + "/" +
// key, keeps the split between base and key unambiguous (Split inverts it
// exactly) and keeps the key out of the base's query parameters.
func (s *Storage) Resolve(key string) string { return s.uri + "#" + key }

// Split is the inverse of Resolve: it returns the OpenStorage-able base URI
// and the key of an absolute URI.
func Split(uri string) (base, key string, err error) {
	base, key, ok := strings.Cut(uri, "#")
	if !ok || base == "" {
		return "", "", fmt.Errorf("checkpoint storage URI %q: no #key", uri)
	}
	if err := checkKey(key); err != nil {
		return "", "", fmt.Errorf("checkpoint storage URI %q: %v", uri, err)
	}
	return base, key, nil
}

// checkKey refuses keys that could escape the storage's prefix or collide
// with fileblob's temporary files.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return fmt.Errorf("invalid key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("invalid key %q", key)
		}
	}
	if strings.HasSuffix(key, ".tmp") {
		return fmt.Errorf("invalid key %q: .tmp is reserved for temporary files", key)
	}
	return nil
}

func (s *Storage) fail(op, key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		err = fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
	}
	return &StorageError{URI: s.uri, Op: op, Key: key, Err: err}
}

// Put writes the whole of r under key, replacing any object there, and
// returns its size and CRC-32C. The write is atomic: readers see the old
// object or the complete new one, never a part; if reading r or ctx fails,
// nothing is published.
func (s *Storage) Put(ctx context.Context, key string, r io.Reader) (size int64, crc uint32, err error) {
	if err := checkKey(key); err != nil {
		return 0, 0, &StorageError{URI: s.uri, Op: "put", Key: key, Err: err}
	}
	// NB: gocloud aborts a write whose context is cancelled before Close;
	// that is how a failed copy is kept from being published.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return 0, 0, s.fail("put", key, err)
	}
	h := crc32.New(castagnoli)
	size, err = io.Copy(io.MultiWriter(w, h), r)
	if err != nil {
		cancel()
		_ = w.Close()
		return 0, 0, s.fail("put", key, err)
	}
	if err := w.Close(); err != nil {
		return 0, 0, s.fail("put", key, err)
	}
	return size, h.Sum32(), nil
}

// Get opens the object under key for reading; the caller closes it. A
// missing key is an error that wraps fs.ErrNotExist and names the key.
func (s *Storage) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, &StorageError{URI: s.uri, Op: "get", Key: key, Err: err}
	}
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, s.fail("get", key, err)
	}
	return &reader{r: r, s: s, key: key}, nil
}

// reader classifies read errors the way Get does.
type reader struct {
	r   *blob.Reader
	s   *Storage
	key string
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = r.s.fail("get", r.key, err)
	}
	return n, err
}

func (r *reader) Close() error { return r.r.Close() }

// Delete removes key. Deleting a missing key is not an error, so Delete is
// idempotent.
func (s *Storage) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return &StorageError{URI: s.uri, Op: "delete", Key: key, Err: err}
	}
	if err := s.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.fail("delete", key, err)
	}
	if s.local {
		s.removeEmptyDirs(key)
	}
	return nil
}

// removeEmptyDirs removes the directories of a local storage that held key
// once they are empty (a deleted checkpoint's chk-<id>/ and its subtask
// directories, an upload's shared/<subtask>/<token>-<n>/), up to the
// storage's own directory. A directory that is not empty stays; errors are
// ignored, since an empty directory harms nothing.
//
// NB: the first two levels under shared/ stay: a subtask's uploads create
// directories there concurrently, and removing one under them would fail
// an upload.
func (s *Storage) removeEmptyDirs(key string) {
	for d := filepath.Dir(filepath.FromSlash(key)); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if parts := strings.Split(filepath.ToSlash(d), "/"); parts[0] == "shared" && len(parts) <= 2 {
			return
		}
		if os.Remove(filepath.Join(s.dir, d)) != nil {
			return
		}
	}
}

// List returns the keys that start with prefix, sorted. The prefix is a
// plain string prefix ("chk-3/" lists that directory, "chk-" every
// checkpoint's files).
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	var keys []string
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, s.fail("list", prefix, err)
		}
		if obj.IsDir || (s.local && strings.HasSuffix(obj.Key, ".tmp")) {
			continue
		}
		keys = append(keys, obj.Key)
	}
	sort.Strings(keys)
	return keys, nil
}

// Close releases the storage's resources. Readers must be closed first.
func (s *Storage) Close() error {
	if err := s.bucket.Close(); err != nil {
		return &StorageError{URI: s.uri, Op: "close", Err: err}
	}
	return nil
}

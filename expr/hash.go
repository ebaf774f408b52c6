package expr

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"

	"github.com/braidflow/braid/types"
)

// The digests of a string's UTF-8 bytes, as lower-case hexadecimal
// (SqlFunctionUtils#hash with EncodingUtils.hex).

func digestKernel(newHash func() hash.Hash) strResult {
	return func(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
		h := newHash()
		h.Write([]byte(args[0].str[i]))
		return hex.EncodeToString(h.Sum(nil)), true, nil
	}
}

// sha2Kernel is SHA2(s, bits) for bits 224, 256, 384 or 512; any other
// length gives NULL.
func sha2Kernel(ec *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
	var f func() hash.Hash
	switch args[1].i64[i] {
	case 224:
		f = sha256.New224
	case 256:
		f = sha256.New
	case 384:
		f = sha512.New384
	case 512:
		f = sha512.New
	default:
		return "", false, nil
	}
	return digestKernel(f)(ec, lim, args, i)
}

// uuidKernel is UUID(): a random (version 4) UUID per row.
func uuidKernel(*Expr, []types.DataType) (kernel, error) {
	return func(ec *evalCtx, _ []*vec) (*vec, error) {
		out := &vec{n: ec.n, str: make([]string, ec.n)}
		var b [16]byte
		for i := range out.str {
			if _, err := rand.Read(b[:]); err != nil {
				return nil, err
			}
			b[6] = b[6]&0x0f | 0x40
			b[8] = b[8]&0x3f | 0x80
			h := hex.EncodeToString(b[:])
			out.str[i] = h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
		return out, nil
	}, nil
}

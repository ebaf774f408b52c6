package types

import "fmt"

// MaxIDLength bounds the ids of jobs, task managers and operators.
const MaxIDLength = 128

// CheckID checks that id, named what in the error ("job id"), is a valid
// id: 1 to MaxIDLength letters, digits, '-', '_' and '.', starting with a
// letter or digit. Ids from the network are checked with it before they
// name anything, so an id can never be a path ("../x"), an empty name or a
// key with separators in etcd.
func CheckID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(id) > MaxIDLength {
		return fmt.Errorf("%s is %d characters long, over the limit of %d", what, len(id), MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0:
		default:
			return fmt.Errorf("%s %q may hold only letters, digits, '-', '_' and '.', and must start with a letter or digit", what, id)
		}
	}
	return nil
}

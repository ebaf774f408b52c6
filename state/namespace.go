package state

// Namespace is a view of a Backend whose state names carry a prefix, so
// that several operators of one chain share the subtask's backend without
// their states clashing. The zero value is unusable.
type Namespace struct {
	b      *Backend
	prefix string
}

// Namespace returns the view of b whose state names start with prefix and
// a slash.
func (b *Backend) Namespace(prefix string) Namespace {
	return Namespace{b: b, prefix: prefix + "/"}
}

// Multiset returns the multiset state called name in the namespace.
func (n Namespace) Multiset(name string) *MultisetState { return n.b.Multiset(n.prefix + name) }

// Value returns the value state called name in the namespace.
func (n Namespace) Value(name string) *ValueState { return n.b.Value(n.prefix + name) }

// Backend returns the backend the namespace views.
func (n Namespace) Backend() *Backend { return n.b }

package store

type Store struct {
	data map[string]string   
}

// New returns an empty, ready-to-use store.
func New() *Store {
	return &Store{data: make(map[string]string)}
}

// Len reports the number of keys.
func (s *Store) Len() int {
	return len(s.data)
}
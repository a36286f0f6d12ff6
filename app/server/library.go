package server

import "perch/app/history"

// Library is what the Teach library offers with the model base: its
// adapters made for base, as "<base>+<name>", and the name of the one whose
// id is choice ("" when none is). The app's local API and perch serve
// both offer the library through it.
func Library(store *history.Store, base, choice string) ([]AdapterModel, string) {
	as, err := store.Adapters()
	if err != nil {
		return nil, ""
	}
	var out []AdapterModel
	def := ""
	for _, a := range as {
		if a.Base == base {
			out = append(out, AdapterModel{Name: a.Name, Dir: a.Dir})
			if a.ID == choice {
				def = a.Name
			}
		}
	}
	return out, def
}

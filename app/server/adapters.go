package server

import (
	"cmp"
	"fmt"
	"strings"
)

// Adapters: the server offers the loaded model alone ("Gemma-4 E2B") and
// with each of its LoRA adapters ("Gemma-4 E2B+my-style"); a request names
// one in "model". A request without a model takes DefaultAdapter.

// AdapterModel is an adapter the server offers with the model.
type AdapterModel struct {
	Name string // the part after "+"
	Dir  string // its folder (mlx-lm's files), as engine.Request.Adapter takes it
}

// offer is the loaded model with its adapters now.
type offer struct {
	ModelInfo
	adapters []AdapterModel
	def      string
}

func (s *Server) offer(m ModelInfo) offer {
	o := offer{ModelInfo: m}
	if s.opts.Adapters != nil {
		o.adapters, o.def = s.opts.Adapters()
	}
	return o
}

// base is what the adapters' names follow.
func (o offer) base() string { return cmp.Or(o.Base, o.ID) }

// ids are the ids /v1/models lists.
func (o offer) ids() []string {
	ids := []string{o.ID}
	for _, a := range o.adapters {
		ids = append(ids, o.base()+"+"+a.Name)
	}
	return ids
}

// resolveModel picks what a request's "model" asks for: the id it is
// answered as and the adapter folder ("" for none). A name that is not
// this model's is answered by the model alone (clients often send their
// own); "<model>+<adapter>" with an unknown adapter is refused.
func (o offer) resolve(asked string) (id, dir string, err error) {
	if asked == "" && o.def != "" {
		asked = o.base() + "+" + o.def
	}
	name, ok := strings.CutPrefix(asked, o.base()+"+")
	if !ok || asked == o.ID {
		return o.ID, "", nil
	}
	for _, a := range o.adapters {
		if a.Name == name {
			return asked, a.Dir, nil
		}
	}
	return "", "", &requestError{param: "model", msg: fmt.Sprintf("model %q is not offered: GET /v1/models lists %s", truncate(asked, 100),
		strings.Join(o.ids(), ", "))}
}

package train

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"perch/engine/train"
)

// methodParams are the flags of the methods' own settings (train.Objective
// Params): one flag per setting name any method declares (--beta,
// --gamma, --desirable-weight, …), so a new method's settings need no edit
// here. Only the flags given reach the run; the others keep each method's
// default.
type methodParams struct {
	vals map[string]*float64
	set  map[string]bool
}

func addMethodParams(fs *flag.FlagSet) *methodParams {
	type use struct {
		method string
		def    float64
		help   string
	}
	uses := map[string][]use{}
	for _, name := range train.MethodNames() {
		obj, _ := train.ObjectiveOf(train.Method(name))
		for _, p := range obj.Params() {
			uses[p.Name] = append(uses[p.Name], use{name, p.Default, p.Help})
		}
	}
	mp := &methodParams{vals: map[string]*float64{}, set: map[string]bool{}}
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var parts []string
		for _, u := range uses[n] {
			parts = append(parts, fmt.Sprintf("%s %g", u.method, u.def))
		}
		help := fmt.Sprintf("a method's setting (defaults: %s): %s", strings.Join(parts, ", "), uses[n][0].help)
		mp.vals[n] = fs.Float64(strings.ReplaceAll(n, "_", "-"), 0, help)
	}
	return mp
}

// given records which flags were set; call after parsing.
func (mp *methodParams) given(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		n := strings.ReplaceAll(f.Name, "-", "_")
		if _, ok := mp.vals[n]; ok {
			mp.set[n] = true
		}
	})
}

// forMethod is the settings given that m declares; a setting given that m
// does not have is an error (it would be silently ignored).
func (mp *methodParams) forMethod(m train.Method) (map[string]float64, error) {
	obj, err := train.ObjectiveOf(m)
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, p := range obj.Params() {
		has[p.Name] = true
	}
	out := map[string]float64{}
	for n := range mp.set {
		if !has[n] {
			return nil, fmt.Errorf("--%s is not a setting of %s", strings.ReplaceAll(n, "_", "-"), m)
		}
		out[n] = *mp.vals[n]
	}
	return out, nil
}

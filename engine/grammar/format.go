package grammar

import (
	"fmt"
	"perch/engine/grammar/regex"
)

// Formats as anchored regexes over the decoded string. Unknown formats are
// annotations (validators do not assert them) and constrain nothing.
// A date is a real calendar day of years 0001-9999; 29 February is left
// out (a regular language cannot tell leap years cheaply).
const dateRe = `(?:\d{3}[1-9]|\d{2}[1-9]\d|\d[1-9]\d{2}|[1-9]\d{3})-` +
	`(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))`

var formats = map[string]string{
	"date":      dateRe,
	"time":      `(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)`,
	"date-time": dateRe + `[Tt](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)`,
	"uuid":      `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
	"ipv4":      `(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`,
	"email":     `[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+`,
	"hostname":  `[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*`,
	"uri":       `[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^{|}]*`,
}

// refused formats are asserted by common validators but not enforced here.
var refused = map[string]bool{"ipv6": true, "uri-reference": true, "iri": true, "iri-reference": true,
	"idn-email": true, "idn-hostname": true, "json-pointer": true, "relative-json-pointer": true,
	"regex": true, "uri-template": true, "duration": true}

// formatRegex is the NFA for a format, nil for one that asserts nothing.
func formatRegex(name string) (*regex.NFA, error) {
	if re, ok := formats[name]; ok {
		return regex.CompileAnchored(re)
	}
	if refused[name] {
		return nil, fmt.Errorf("format %q is not supported", name)
	}
	return nil, nil
}

package bundle

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParsePlist reads an XML property list whose root is a dict of strings,
// booleans, integers, and arrays or dicts of those; it is for checking
// Perch's own plists, not a general parser.
func ParsePlist(data []byte) (map[string]any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("plist: no <dict> root: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "plist":
				continue
			case "dict":
				v, err := parseDict(d, 0)
				if err != nil {
					return nil, err
				}
				return v, nil
			default:
				return nil, fmt.Errorf("plist: root is <%s>, want <dict>", se.Name.Local)
			}
		}
	}
}

const maxDepth = 16

func parseDict(d *xml.Decoder, depth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, errors.New("plist: nested too deeply")
	}
	out := map[string]any{}
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("plist: %w", err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return out, nil
		case xml.StartElement:
			if t.Name.Local != "key" {
				return nil, fmt.Errorf("plist: <%s> where a <key> belongs", t.Name.Local)
			}
			key, err := text(d)
			if err != nil {
				return nil, err
			}
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("plist: key %q twice", key)
			}
			v, end, err := parseValue(d, depth)
			if err == nil && end {
				err = errors.New("missing value")
			}
			if err != nil {
				return nil, fmt.Errorf("plist: %s: %w", key, err)
			}
			out[key] = v
		}
	}
}

// parseValue reads the next value; end reports that the enclosing element
// closed instead.
func parseValue(d *xml.Decoder, depth int) (v any, end bool, err error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		if _, ok := tok.(xml.EndElement); ok {
			return nil, true, nil
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "string":
			s, err := text(d)
			return s, false, err
		case "true", "false":
			return se.Name.Local == "true", false, d.Skip()
		case "integer":
			s, err := text(d)
			if err != nil {
				return nil, false, err
			}
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			return n, false, err
		case "array":
			if depth > maxDepth {
				return nil, false, errors.New("nested too deeply")
			}
			arr := []any{}
			for {
				v, end, err := parseValue(d, depth+1)
				if err != nil {
					return nil, false, err
				}
				if end {
					return arr, false, nil
				}
				arr = append(arr, v)
			}
		case "dict":
			m, err := parseDict(d, depth+1)
			return m, false, err
		default:
			return nil, false, fmt.Errorf("unsupported <%s>", se.Name.Local)
		}
	}
}

// text reads character data up to the element's end.
func text(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", io.ErrUnexpectedEOF
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", fmt.Errorf("<%s> inside text", t.Name.Local)
		}
	}
}

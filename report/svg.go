package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// svgElements and svgAttrs are everything gonum's SVG canvas writes. Anything else in a chart
// (a script, an event handler, a link) means the chart is not what this package expects, and
// it is not inlined: the page must stay inert whatever the results files contain.
var (
	svgElements = map[string]bool{"svg": true, "g": true, "path": true, "text": true, "image": true}
	svgAttrs    = map[string]bool{
		"width": true, "height": true, "viewBox": true, "xmlns": true, "xmlns:xlink": true, "version": true,
		"transform": true, "d": true, "style": true, "x": true, "y": true, "xlink:href": true,
	}
)

// safeSVG returns the <svg> element of an SVG document, without the XML declaration and the
// comments before it (none is allowed inside), after checking that it is well-formed and uses only svgElements and
// svgAttrs, that an image's link is a data: URI of an image, and that no style loads
// anything.
func safeSVG(doc []byte) (string, error) {
	at := bytes.Index(doc, []byte("<svg"))
	if at < 0 {
		return "", errors.New("svg: no <svg> element")
	}
	body := doc[at:]
	// encoding/xml reports a CDATA section as plain text; keep the HTML parser's view and
	// ours the same by allowing none.
	if bytes.Contains(body, []byte("<![CDATA[")) {
		return "", errors.New("svg: CDATA section not allowed")
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	depth, roots := 0, 0
	var open []string
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("svg: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := qname(t.Name)
			if !svgElements[name] {
				return "", fmt.Errorf("svg: element <%s> not allowed", name)
			}
			if depth == 0 {
				if roots++; roots > 1 || name != "svg" {
					return "", errors.New("svg: more than one root element")
				}
			}
			for _, a := range t.Attr {
				an := qname(a.Name)
				if !svgAttrs[an] {
					return "", fmt.Errorf("svg: attribute %s on <%s> not allowed", an, name)
				}
				v := strings.ToLower(a.Value)
				if an == "xlink:href" && !strings.HasPrefix(v, "data:image/") {
					return "", fmt.Errorf("svg: link %.40q not allowed", a.Value)
				}
				if an == "style" && (strings.Contains(v, "url(") || strings.Contains(v, "expression") || strings.Contains(v, "@import")) {
					return "", fmt.Errorf("svg: style %.40q not allowed", a.Value)
				}
			}
			open = append(open, name)
			depth++
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != qname(t.Name) {
				return "", fmt.Errorf("svg: unexpected </%s>", qname(t.Name))
			}
			depth--
			open = open[:len(open)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 && (len(open) == 0 || open[len(open)-1] != "text") {
				return "", errors.New("svg: text outside a <text> element")
			}
		default:
			return "", fmt.Errorf("svg: %T not allowed inside the document", t)
		}
	}
	if roots != 1 || depth != 0 {
		return "", errors.New("svg: unterminated document")
	}
	return string(bytes.TrimSpace(body)), nil
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

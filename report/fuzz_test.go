package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// FuzzSafeSVG: whatever the input, safeSVG never panics, and what it accepts is one
// well-formed <svg> element with no script, event handler or outside link.
func FuzzSafeSVG(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><svg width="1" height="1"><g><path d="M0,0" style="fill:#000"/><text x="1" y="1">a</text></g></svg>`))
	f.Add([]byte(`<svg><script>alert(1)</script></svg>`))
	f.Add([]byte(`<svg><image xlink:href="data:image/png;base64,AA"/></svg>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := safeSVG(doc)
		if err != nil {
			return
		}
		if !strings.HasPrefix(out, "<svg") {
			t.Fatalf("accepted output does not start with <svg: %.40q", out)
		}
		d := xml.NewDecoder(strings.NewReader(out))
		for {
			tok, err := d.RawToken()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("accepted output is not well-formed: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				if !svgElements[qname(se.Name)] {
					t.Fatalf("accepted element <%s>", qname(se.Name))
				}
				for _, a := range se.Attr {
					v := strings.ToLower(a.Value)
					if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") ||
						(strings.HasSuffix(a.Name.Local, "href") && !strings.HasPrefix(v, "data:image/")) {
						t.Fatalf("accepted attribute %s=%q", qname(a.Name), a.Value)
					}
				}
			}
		}
		if bytes.Contains(bytes.ToLower([]byte(out)), []byte("<script")) {
			t.Fatalf("accepted a script: %q", out)
		}
	})
}

package dashboard

import (
	"bytes"
	"html/template"
)

func renderPage(opts Options) []byte {
	tpl := template.Must(template.ParseFS(assets, "assets/index.html"))
	var b bytes.Buffer
	if err := tpl.Execute(&b, opts); err != nil {
		panic("dashboard: page template: " + err.Error()) // the template is embedded: a bug
	}
	return b.Bytes()
}

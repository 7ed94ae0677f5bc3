package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// jsonOf is v as JSON, for comparing what two sessions see.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// featureLists lists a session's prompts, resources and templates as JSON, by
// name or URI.
func featureLists(t *testing.T, cs *mcp.ClientSession) (prompts, resources, templates map[string]string) {
	t.Helper()
	ctx := context.Background()
	prompts, resources, templates = map[string]string{}, map[string]string{}, map[string]string{}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts[p.Name] = jsonOf(t, p)
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		resources[r.URI] = jsonOf(t, r)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates[r.URITemplate] = jsonOf(t, r)
	}
	return prompts, resources, templates
}

// TestMCPProxyEverythingPassesFeatures: prompts, resources, templates,
// completions, logging and subscriptions of the reference server are the same
// through the proxy as direct, and so are its capabilities.
func TestMCPProxyEverythingPassesFeatures(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	argv := everything(t)
	direct := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	dcs, err := direct.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...), TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dcs.Close()
	r := startProxy(t, append([]string{"--"}, argv...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	dc, pc := dcs.InitializeResult().Capabilities, r.cs.InitializeResult().Capabilities
	for what, has := range map[string][2]bool{
		"prompts":     {dc.Prompts != nil, pc.Prompts != nil},
		"resources":   {dc.Resources != nil, pc.Resources != nil},
		"subscribe":   {dc.Resources != nil && dc.Resources.Subscribe, pc.Resources != nil && pc.Resources.Subscribe},
		"completions": {dc.Completions != nil, pc.Completions != nil},
		"logging":     {dc.Logging != nil, pc.Logging != nil},
		"tools":       {dc.Tools != nil, pc.Tools != nil},
	} {
		if !has[0] {
			t.Fatalf("the reference server no longer declares %s: the test shows nothing", what)
		}
		if !has[1] {
			t.Errorf("capability %s: declared by the server, not by the proxy", what)
		}
	}

	wp, wr, wt := featureLists(t, dcs)
	gp, gr, gt := featureLists(t, r.cs)
	if len(wp) < 4 || len(wr) < 1 || len(wt) < 2 {
		t.Fatalf("direct: %d prompts, %d resources, %d templates: fewer than the reference server has", len(wp), len(wr), len(wt))
	}
	for what, pair := range map[string][2]map[string]string{"prompts": {wp, gp}, "resources": {wr, gr}, "templates": {wt, gt}} {
		if jsonOf(t, pair[0]) != jsonOf(t, pair[1]) {
			t.Errorf("%s: direct %v\nthrough the proxy %v", what, pair[0], pair[1])
		}
	}
	t.Logf("direct == through the proxy: %d prompts, %d resources, %d templates", len(wp), len(wr), len(wt))

	// A prompt with arguments, a static resource and a templated one.
	get := &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Paris", "state": "IDF"}}
	want, err := dcs.GetPrompt(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.cs.GetPrompt(ctx, get)
	// (the proxy's SDK speaks a newer protocol: _meta and resultType differ)
	if err != nil || jsonOf(t, got.Messages) != jsonOf(t, want.Messages) || got.Description != want.Description {
		t.Fatalf("prompts/get: %v\n got %s\nwant %s", err, jsonOf(t, got), jsonOf(t, want))
	}
	static := slices.Sorted(mapsKeys(wr))[0]
	for _, uri := range []string{static, "demo://resource/dynamic/text/3"} {
		want, err := dcs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(got.Contents) != 1 || got.Contents[0].URI != uri || got.Contents[0].MIMEType != want.Contents[0].MIMEType ||
			!strings.HasPrefix(got.Contents[0].Text, strings.SplitN(want.Contents[0].Text, " created at", 2)[0]) {
			t.Fatalf("resources/read %s: %v\n got %s\nwant %s", uri, err, jsonOf(t, got), jsonOf(t, want))
		}
	}

	// A completion of a prompt's argument.
	comp, err := r.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"Sales", "Support"}) {
		t.Fatalf("completion/complete: %v %+v", err, comp)
	}

	// Logging: the client's level reaches the server, the server's messages the client.
	if err := r.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// A subscription: the server acknowledges it with a log message and, once
	// asked to, sends updates for the subscribed URI.
	const sub = "demo://resource/dynamic/text/1"
	if err := r.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: sub}); err != nil {
		t.Fatalf("resources/subscribe through the proxy: %v", err)
	}
	waitLog := func(substr string) {
		t.Helper()
		deadline := time.After(20 * time.Second) // a message every 5 s, some below the client's level
		for {
			select {
			case m := <-r.logs:
				if strings.Contains(jsonOf(t, m.Data), substr) {
					return
				}
			case <-deadline:
				t.Fatalf("no log message containing %q reached the client", substr)
			}
		}
	}
	waitLog("Subscribe Resource request for URI: " + sub)
	if res := r.call(t, "toggle-subscriber-updates", map[string]any{}); res.IsError {
		t.Fatalf("toggle-subscriber-updates: %+v", res)
	}
	select {
	case uri := <-r.updated:
		if uri != sub {
			t.Fatalf("notifications/resources/updated for %q, subscribed to %q", uri, sub)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated reached the client")
	}
	r.call(t, "toggle-subscriber-updates", map[string]any{})
	if res := r.call(t, "toggle-simulated-logging", map[string]any{}); res.IsError {
		t.Fatalf("toggle-simulated-logging: %+v", res)
	}
	// The simulated messages are "Debug-level message" ... but "Alert
	// level-message": any of them will do.
	waitLog("level")
	r.call(t, "toggle-simulated-logging", map[string]any{})
}

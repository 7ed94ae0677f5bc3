package mcptool

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addFeatures gives s a prompt and a resource named after tag.
func addFeatures(s *scripted, tag string) {
	s.srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "from " + tag}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + tag}}}}, nil
	})
	uri := "test://" + tag + "/doc"
	s.srv.AddResource(&mcp.Resource{URI: uri, Name: tag + "-doc", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "doc of " + tag}}}, nil
	})
}

// TestProxyPassesPromptsAndResourcesOfSeveralServers: with two upstreams,
// prompts are served as server__prompt and reach their own server; resources
// keep their URIs and reach the server that lists them; changes on a server
// reach the client; capabilities are the servers' union.
func TestProxyPassesPromptsAndResourcesOfSeveralServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newScripted(), newScripted()
		addFeatures(a, "a")
		addFeatures(b, "b")
		h := start(t, ProxyConfig{}, map[string]*scripted{"a": a, "b": b})
		ctx := context.Background()
		caps := h.cs.InitializeResult().Capabilities
		if caps.Prompts == nil || caps.Resources == nil || caps.Logging == nil || caps.Completions != nil {
			t.Fatalf("capabilities %+v: want prompts, resources and logging (the servers'), no completions", caps)
		}
		var prompts []string
		for p, err := range h.cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		slices.Sort(prompts)
		if !slices.Equal(prompts, []string{"a__greet", "b__greet"}) {
			t.Fatalf("prompts %v", prompts)
		}
		for _, tag := range []string{"a", "b"} {
			got, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tag + "__greet"})
			if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "hello from "+tag {
				t.Fatalf("prompts/get %s__greet: %v %+v", tag, err, got)
			}
			res, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://" + tag + "/doc"})
			if err != nil || res.Contents[0].Text != "doc of "+tag {
				t.Fatalf("resources/read of %s's doc: %v %+v", tag, err, res)
			}
		}
		if _, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://c/doc"}); err == nil {
			t.Fatal("a resource no server lists was read")
		}

		// A prompt removed on a server disappears for the client.
		b.srv.RemovePrompts("greet")
		time.Sleep(time.Second) // past the SDK's debounce of list_changed, both hops
		synctest.Wait()
		prompts = prompts[:0]
		for p, err := range h.cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		if !slices.Equal(prompts, []string{"a__greet"}) {
			t.Fatalf("prompts after b removed its own: %v", prompts)
		}
	})
}

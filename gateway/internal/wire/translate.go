package wire

// Translation is one client request translated for one chain entry, with
// what the translation of that entry's answer needs.
type Translation struct {
	From API    // the client's wire
	To   Target // the entry
	// Body is the request to send to the entry.
	Body []byte
	// Dropped names the parameters left out (x-loopctl-dropped): those
	// that change nothing the client reads and the built-in tools the
	// entry cannot host.
	Dropped []string

	// tools are the client's tools by the name sent upstream (a long name
	// hashed, a namespace tool flattened, a custom tool as a function).
	tools map[string]Tool
	// stops are the stop sequences, cut locally on a Responses target
	// (it has no stop parameter).
	stops []string
	// streamUsage: the client (chat) asked for a usage chunk.
	streamUsage bool
	// estimate is the request's input tokens, estimated (a Messages
	// stream's message_start when the upstream reports usage at the end).
	estimate int
}

// clientTool returns the client's view of a tool name the upstream used:
// its original name, namespace, and whether it is a custom tool (custom
// tools exist on Responses and chat, namespaces on Responses only). A name
// the request did not offer is returned as it is.
func (t *Translation) clientTool(upstream string) Tool {
	tool, ok := t.tools[upstream]
	if !ok || tool.Namespace != "" && t.From != Responses || tool.Custom && t.From == Messages {
		return Tool{Name: upstream}
	}
	return tool
}

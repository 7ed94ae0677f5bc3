package gateway

import (
	"encoding/json"
	"net/http"
)

// The model list: GET /v1/models and /v1/models/{id}, in OpenAI's shape or,
// for a client that sends anthropic-version, Anthropic's.

// modelList is the body of GET /v1/models: the configured models.
func modelList(models []Model) []byte {
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for _, m := range models {
		list.Data = append(list.Data, entry{ID: m.Name, Object: "model", OwnedBy: "loopctl"})
	}
	b, _ := json.Marshal(list)
	return b
}

// anthropicModelList is GET /v1/models in Anthropic's list shape, for a
// client that sends anthropic-version (Claude Code, @anthropic-ai/sdk).
func anthropicModelList(models []Model) []byte {
	type entry struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	list := struct {
		Data    []entry `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: []entry{}}
	for _, m := range models {
		list.Data = append(list.Data, entry{Type: "model", ID: m.Name, DisplayName: m.Name, CreatedAt: "1970-01-01T00:00:00Z"})
	}
	if n := len(list.Data); n > 0 {
		list.FirstID, list.LastID = &list.Data[0].ID, &list.Data[n-1].ID
	}
	b, _ := json.Marshal(list)
	return b
}

// listModels serves GET /v1/models: the configured models.
func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	if !g.authorized(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Anthropic-Version") != "" {
		_, _ = w.Write(g.lists.anthropic)
		return
	}
	_, _ = w.Write(g.lists.openai)
}

// model serves GET /v1/models/{id}: one configured model, or 404
// model_not_found.
func (g *Gateway) model(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	if !g.authorized(w, r) {
		return
	}
	if g.models[id] == nil {
		writeOpenAIError(w, http.StatusNotFound, apiError{Message: "The model `" + id + "` does not exist (see GET /v1/models)", Type: "invalid_request_error", Param: "model", Code: "model_not_found"})
		return
	}
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}{id, "model", 0, "loopctl"})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

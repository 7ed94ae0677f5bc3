package llmtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
)

// embeddingsWire is OpenAI embeddings (POST .../embeddings). Each input is
// answered with a deterministic vector of [EmbeddingDims] numbers derived
// from its text (the same text, the same vector), as floats or, when the
// request asks for encoding_format "base64" (the openai clients' default),
// as little-endian float32 in base64. A Reply's Text and ToolCalls are
// unused; its Usage is reported.
type embeddingsWire struct{}

// EmbeddingDims is the length of every vector the embeddings endpoint returns.
const EmbeddingDims = 8

func (embeddingsWire) matches(path string) bool { return strings.HasSuffix(path, "/embeddings") }

func (embeddingsWire) endpoint() string { return "embeddings" }

func (embeddingsWire) errorBody(status int, msg string) string {
	return openaiWire{}.errorBody(status, msg)
}

type emRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

func (embeddingsWire) decode(body []byte) (Request, string, error) {
	var in emRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, "", err
	}
	r := Request{Model: in.Model}
	problem := ""
	var one string
	var many []string
	switch {
	case json.Unmarshal(in.Input, &one) == nil:
		many = []string{one}
	case json.Unmarshal(in.Input, &many) == nil && len(many) > 0:
	default:
		problem = "'input' must be a string or a non-empty list of strings"
	}
	if in.Model == "" {
		problem = "you must provide a model parameter"
	}
	for _, s := range many {
		r.Messages = append(r.Messages, Message{Role: "user", Content: s})
	}
	return r, problem, nil
}

// vector is text's deterministic embedding.
func vector(text string) []float32 {
	v := make([]float32, EmbeddingDims)
	for i := range v {
		h := fnv.New32a()
		_, _ = h.Write([]byte{byte(i)})
		_, _ = h.Write([]byte(text))
		v[i] = float32(h.Sum32()%2000)/1000 - 1
	}
	return v
}

func (embeddingsWire) reply(w http.ResponseWriter, r Request, rep Reply) {
	var in emRequest
	_ = json.Unmarshal(r.Body, &in)
	data := []any{}
	for i, m := range r.Messages {
		v := vector(m.Content)
		var emb any = v
		if in.EncodingFormat == "base64" {
			b := make([]byte, 0, 4*len(v))
			for _, f := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": emb})
	}
	b, _ := json.Marshal(map[string]any{
		"object": "list", "data": data, "model": r.Model,
		"usage": map[string]any{"prompt_tokens": rep.Usage.InputTokens, "total_tokens": rep.Usage.InputTokens},
	})
	writeJSON(w, http.StatusOK, nil, string(b))
}

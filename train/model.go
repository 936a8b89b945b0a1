package train

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Model is a transformer: its shape and the few choices that change its
// work and its memory. Sizes are elements (not bytes).
type Model struct {
	// Name is the preset's name or the file the model came from.
	Name string `yaml:"name" json:"name"`
	// Encoder marks an encoder (bidirectional attention, BERT-like); the
	// work and memory are the same as a decoder's of the same shape.
	Encoder bool `yaml:"encoder,omitempty" json:"encoder,omitempty"`
	Hidden  int  `yaml:"hidden" json:"hidden"`
	Layers  int  `yaml:"layers" json:"layers"`
	Heads   int  `yaml:"heads" json:"heads"`
	// KVHeads is the number of key/value heads (grouped-query attention);
	// 0 means Heads.
	KVHeads int `yaml:"kv_heads,omitempty" json:"kv_heads,omitempty"`
	// FFN is the feed-forward hidden size; 0 means 4 × Hidden.
	FFN int `yaml:"ffn,omitempty" json:"ffn,omitempty"`
	// Gated is a gated feed-forward block (SwiGLU: three matrices, no
	// biases).
	Gated bool `yaml:"gated,omitempty" json:"gated,omitempty"`
	Vocab int  `yaml:"vocab" json:"vocab"`
	// Seq is the training sequence length in tokens.
	Seq int `yaml:"seq" json:"seq"`
	// Positions is the size of a learned position embedding (0: rotary or
	// none).
	Positions int `yaml:"positions,omitempty" json:"positions,omitempty"`
	// Tied shares the input embedding with the output head.
	Tied bool `yaml:"tied,omitempty" json:"tied,omitempty"`
	// Experts and TopK make every feed-forward block a mixture of experts:
	// Experts copies, TopK of them per token.
	Experts int `yaml:"experts,omitempty" json:"experts,omitempty"`
	TopK    int `yaml:"top_k,omitempty" json:"top_k,omitempty"`
	// Dropout and AttentionDropout say whether the hidden states and the
	// attention probabilities go through dropout, which keeps masks (and,
	// for attention, a second copy of the probabilities) for the backward
	// pass.
	Dropout          bool `yaml:"dropout,omitempty" json:"dropout,omitempty"`
	AttentionDropout bool `yaml:"attention_dropout,omitempty" json:"attention_dropout,omitempty"`
	// Net, when set, makes the model a graph network (ResolveNetwork):
	// Layers is its graph layers, Seq 1 (a "token" is a sample), and the
	// transformer's fields are unused.
	Net *Network `yaml:"-" json:"-"`
}

// kvHeads is the number of key/value heads.
func (m *Model) kvHeads() int {
	if m.KVHeads > 0 {
		return m.KVHeads
	}
	return m.Heads
}

// ffn is the feed-forward hidden size.
func (m *Model) ffn() int {
	if m.FFN > 0 {
		return m.FFN
	}
	return 4 * m.Hidden
}

// experts is the number of expert copies of the feed-forward block (1
// without mixture of experts) and active the number each token uses.
func (m *Model) experts() (total, active int) {
	if m.Experts > 1 {
		k := m.TopK
		if k <= 0 {
			k = 1
		}
		return m.Experts, k
	}
	return 1, 1
}

// qkvWidth is the output width of the fused query/key/value projection.
func (m *Model) qkvWidth() int {
	return m.Hidden + 2*m.kvHeads()*(m.Hidden/m.Heads)
}

// ffnMatrices is the number of Hidden×FFN matrices of a feed-forward
// block: 3 when gated, else 2.
func (m *Model) ffnMatrices() int {
	if m.Gated {
		return 3
	}
	return 2
}

// LayerParams is the number of parameters of one transformer layer.
func (m *Model) LayerParams() int64 {
	h, f := int64(m.Hidden), int64(m.ffn())
	e, _ := m.experts()
	attn := h*int64(m.qkvWidth()) + h*h
	ffn := int64(m.ffnMatrices()) * h * f * int64(e)
	norms := 4 * h
	if m.Gated {
		// gated blocks (Llama) have no biases and RMS norms with one vector
		norms = 2 * h
	} else {
		attn += int64(m.qkvWidth()) + h
		ffn += (f + h) * int64(e)
	}
	if e > 1 {
		ffn += h * int64(e) // router
	}
	return attn + ffn + norms
}

// EmbeddingParams is the number of parameters of the input embedding
// (tokens and learned positions).
func (m *Model) EmbeddingParams() int64 {
	return int64(m.Vocab+m.Positions) * int64(m.Hidden)
}

// HeadParams is the number of parameters of the final norm and, when not
// tied, the output projection.
func (m *Model) HeadParams() int64 {
	n := 2 * int64(m.Hidden)
	if !m.Tied {
		n += int64(m.Vocab) * int64(m.Hidden)
	}
	return n
}

// Params is the model's parameter count.
func (m *Model) Params() int64 {
	if m.Net != nil {
		return m.Net.Params()
	}
	return int64(m.Layers)*m.LayerParams() + m.EmbeddingParams() + m.HeadParams()
}

// ActiveLayerParams is LayerParams counting only the experts a token uses.
func (m *Model) activeLayerParams() int64 {
	e, k := m.experts()
	if e == 1 {
		return m.LayerParams()
	}
	h, f := int64(m.Hidden), int64(m.ffn())
	return m.LayerParams() - int64(m.ffnMatrices())*h*f*int64(e-k)
}

// FLOPsPerToken is the model's forward work per token in FLOPs with a
// multiply-add counted as two: 2 × the parameters a token uses (without
// the embedding lookup) plus the attention scores over Seq tokens. Training
// is about three times this; MFU counts it that way.
//
// For a graph network it is the forward FLOPs per sample.
func (m *Model) FLOPsPerToken() float64 {
	if m.Net != nil {
		return m.Net.FLOPs()
	}
	h, s := float64(m.Hidden), float64(m.Seq)
	layer := 2*float64(m.activeLayerParams()) + 4*s*h
	return float64(m.Layers)*layer + 2*float64(m.Vocab)*h
}

// Validate checks the shape; the error names the field.
func (m *Model) Validate() error {
	if m.Net != nil {
		if len(m.Net.Layers) == 0 || m.Layers != len(m.Net.Layers) || m.Seq != 1 {
			return fmt.Errorf("graph network with %d layers, model with %d", len(m.Net.Layers), m.Layers)
		}
		return nil
	}
	switch {
	case m.Hidden <= 0:
		return fmt.Errorf("hidden must be positive")
	case m.Layers <= 0:
		return fmt.Errorf("layers must be positive")
	case m.Heads <= 0:
		return fmt.Errorf("heads must be positive")
	case m.Hidden%m.Heads != 0:
		return fmt.Errorf("heads %d do not divide hidden %d", m.Heads, m.Hidden)
	case m.KVHeads < 0 || m.KVHeads > m.Heads || (m.KVHeads > 0 && m.Heads%m.KVHeads != 0):
		return fmt.Errorf("kv_heads %d must divide heads %d", m.KVHeads, m.Heads)
	case m.FFN < 0:
		return fmt.Errorf("ffn must not be negative")
	case m.Vocab <= 0:
		return fmt.Errorf("vocab must be positive")
	case m.Seq <= 0:
		return fmt.Errorf("seq must be positive")
	case m.Positions < 0:
		return fmt.Errorf("positions must not be negative")
	case m.Experts < 0 || m.TopK < 0 || (m.Experts > 1 && m.TopK > m.Experts):
		return fmt.Errorf("top_k %d must be at most experts %d", m.TopK, m.Experts)
	case m.Hidden > 1<<20 || m.Layers > 1<<16 || m.Seq > 1<<24 || m.Vocab > 1<<24 || m.ffn() > 1<<22 || m.Experts > 1<<12:
		return fmt.Errorf("shape too large (hidden ≤ 2^20, layers ≤ 2^16, seq ≤ 2^24, vocab ≤ 2^24, ffn ≤ 2^22, experts ≤ 2^12)")
	}
	return nil
}

// gpt is a Megatron-LM GPT of the SC'21 and MLSys'23 papers: vocabulary
// 51,200, sequence 2,048, dropout on, learned positions, tied embeddings.
func gpt(name string, hidden, layers, heads int) Model {
	return Model{Name: name, Hidden: hidden, Layers: layers, Heads: heads, Vocab: 51200, Seq: 2048,
		Positions: 2048, Tied: true, Dropout: true, AttentionDropout: true}
}

// Presets returns the named models, sorted by name where the name is not
// an order of size: the GPT sizes of Narayanan et al. (SC'21, Table 1) and
// Korthikanti et al. (MLSys'23, Table 3), then the open models.
func Presets() []Model {
	return []Model{
		// Narayanan et al., SC'21, Table 1 (heads, hidden, layers).
		gpt("gpt3-1.7b", 2304, 24, 24),
		gpt("gpt3-3.6b", 3072, 30, 32),
		gpt("gpt3-7.5b", 4096, 36, 32),
		gpt("gpt3-18b", 6144, 40, 48),
		// Korthikanti et al., MLSys'23, Table 3: the 22B model.
		gpt("gpt3-22b", 6144, 48, 64),
		gpt("gpt3-39b", 8192, 48, 64),
		gpt("gpt3-76b", 10240, 60, 80),
		gpt("gpt3-145b", 12288, 80, 96),
		// GPT-3 175B (Brown et al. 2020), as in MLSys'23 Table 3.
		gpt("gpt3-175b", 12288, 96, 96),
		gpt("gpt3-310b", 16384, 96, 128),
		gpt("gpt3-530b", 20480, 105, 128),
		gpt("gpt3-1t", 25600, 128, 160),
		// OPT-350M as Sailor trains it (training_config_opt_350.json:
		// hidden 1024, 24 layers, 16 heads, vocabulary 50,272, sequence
		// 2,048); Hugging Face's config: attention dropout 0, dropout 0.1.
		{Name: "opt-350m", Hidden: 1024, Layers: 24, Heads: 16, Vocab: 50272, Seq: 2048, Positions: 2048, Tied: true, Dropout: true},
		// GPT-Neo 2.7B (EleutherAI config: hidden 2560, 32 layers, 32
		// heads, vocabulary 50,257, 2,048 positions, attention dropout 0).
		{Name: "gpt-neo-2.7b", Hidden: 2560, Layers: 32, Heads: 32, Vocab: 50257, Seq: 2048, Positions: 2048, Tied: true, Dropout: true},
		// OPT-30B (Zhang et al. 2022, Table 1: 48 layers, 56 heads, hidden
		// 7168), as Sailor profiles it (sequence 2,048).
		{Name: "opt-30b", Hidden: 7168, Layers: 48, Heads: 56, Vocab: 50272, Seq: 2048, Positions: 2048, Tied: true, Dropout: true},
		// Llama 3 (Meta's model cards and params.json): GQA with 8 KV
		// heads, SwiGLU, RoPE, vocabulary 128,256, no dropout.
		{Name: "llama-3-8b", Hidden: 4096, Layers: 32, Heads: 32, KVHeads: 8, FFN: 14336, Gated: true, Vocab: 128256, Seq: 8192},
		{Name: "llama-3-70b", Hidden: 8192, Layers: 80, Heads: 64, KVHeads: 8, FFN: 28672, Gated: true, Vocab: 128256, Seq: 8192},
	}
}

// Preset returns the model called name.
func Preset(name string) (Model, bool) {
	for _, m := range Presets() {
		if m.Name == strings.ToLower(name) {
			return m, true
		}
	}
	return Model{}, false
}

// PresetNames lists the presets' names in Presets' order.
func PresetNames() []string {
	var out []string
	for _, m := range Presets() {
		out = append(out, m.Name)
	}
	return out
}

// ResolveModel returns a preset, a one-line model ("gpt:hidden=…,…"; see
// ParseModelLine) or a model read from a YAML file.
//
// A zoo network (zoo:NAME or its name) or an ONNX file is a graph network
// at its default input (ResolveNetwork).
func ResolveModel(s string) (Model, error) {
	if m, ok := Preset(s); ok {
		return m, nil
	}
	if graphModelArg(s) {
		return ResolveNetwork(s, "")
	}
	if i := strings.IndexByte(s, ':'); i > 0 && !strings.ContainsAny(s[:i], "/.") {
		return ParseModelLine(s)
	}
	if strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml") || strings.ContainsRune(s, '/') {
		data, err := os.ReadFile(s)
		if err != nil {
			return Model{}, fmt.Errorf("train: %w", err)
		}
		return ParseModel(s, data)
	}
	return Model{}, fmt.Errorf("train: unknown model %q (presets: %s; or kind:key=value,…; or a YAML file; or zoo:NAME or an .onnx file)", s, strings.Join(PresetNames(), ", "))
}

// modelKinds are the one-line form's kinds and their defaults.
var modelKinds = map[string]Model{
	"gpt":   {Dropout: true, AttentionDropout: true, Tied: true},
	"bert":  {Encoder: true, Dropout: true, AttentionDropout: true, Tied: true},
	"llama": {Gated: true},
}

// ParseModelLine reads "KIND:key=value,…": KIND is gpt (dropout on, tied
// embeddings, learned positions up to seq), bert (the same, an encoder) or
// llama (gated FFN, no dropout, rotary positions, untied); keys are
// hidden, layers, heads, kv_heads, ffn, vocab, seq, experts, top_k,
// positions, and the booleans gated, tied, dropout, attention_dropout.
func ParseModelLine(s string) (Model, error) {
	kind, rest, _ := strings.Cut(s, ":")
	m, ok := modelKinds[kind]
	if !ok {
		return Model{}, fmt.Errorf("train: model %q: unknown kind %q (gpt, bert, llama)", s, kind)
	}
	m.Name = s
	positions := -1
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		if kv == "" {
			continue
		}
		k, v, found := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if !found {
			return Model{}, fmt.Errorf("train: model %q: %q: want key=value", s, kv)
		}
		if seen[k] {
			return Model{}, fmt.Errorf("train: model %q: %s given twice", s, k)
		}
		seen[k] = true
		var ip *int
		var bp *bool
		switch k {
		case "hidden":
			ip = &m.Hidden
		case "layers":
			ip = &m.Layers
		case "heads":
			ip = &m.Heads
		case "kv_heads", "kv":
			ip = &m.KVHeads
		case "ffn":
			ip = &m.FFN
		case "vocab":
			ip = &m.Vocab
		case "seq":
			ip = &m.Seq
		case "experts":
			ip = &m.Experts
		case "top_k", "topk":
			ip = &m.TopK
		case "positions":
			ip = &positions
		case "gated":
			bp = &m.Gated
		case "tied":
			bp = &m.Tied
		case "dropout":
			bp = &m.Dropout
		case "attention_dropout":
			bp = &m.AttentionDropout
		default:
			return Model{}, fmt.Errorf("train: model %q: unknown key %q", s, k)
		}
		if ip != nil {
			n, err := strconv.Atoi(v)
			if err != nil {
				return Model{}, fmt.Errorf("train: model %q: %s: %q is not an integer", s, k, v)
			}
			*ip = n
		} else {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Model{}, fmt.Errorf("train: model %q: %s: %q is not true or false", s, k, v)
			}
			*bp = b
		}
	}
	if m.Vocab == 0 && !seen["vocab"] {
		m.Vocab = 51200
	}
	switch {
	case positions >= 0:
		m.Positions = positions
	case kind != "llama":
		m.Positions = m.Seq
	}
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("train: model %q: %v", s, err)
	}
	return m, nil
}

// ParseModel reads a model from YAML (the fields of Model); file names the
// source in errors.
func ParseModel(file string, data []byte) (Model, error) {
	var m Model
	if err := decodeYAML(data, &m); err != nil {
		return Model{}, fmt.Errorf("train: %s: %s", file, err)
	}
	if m.Name == "" {
		m.Name = file
	}
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("train: %s: %v", file, err)
	}
	return m, nil
}

// decodeYAML decodes one YAML document strictly (unknown fields are
// errors) into v and returns a one-line error.
func decodeYAML(data []byte, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if err.Error() == "EOF" {
			return fmt.Errorf("empty file")
		}
		return fmt.Errorf("%s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", "; "))
	}
	return nil
}

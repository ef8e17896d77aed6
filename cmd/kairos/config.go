package main

import (
	"sort"
	"strconv"
	"strings"
)

// Config is the environment of doc/config.md.
type Config struct {
	TelegramToken  string
	TelegramAPIURL string
	OpenAIKey      string
	OpenAIBaseURL  string
	Model          string
	FallbackModels []string
	EmbeddingModel string
	// EmbeddingDimensions asks the embeddings endpoint for shorter
	// vectors (KAIROS_EMBEDDING_DIMENSIONS; 0: the model's size).
	EmbeddingDimensions int
	// TranscribeModel, TranscribeURL and VisionModel configure media.
	TranscribeModel string
	TranscribeURL   string
	VisionModel     string
	DataDir         string
	DatabaseURL     string
	PolicyPath      string
	HTTPAddr        string
	WebhookURL      string
	WebhookSecret   string
	SearchProvider  string
	SearchURL       string
	BraveKey        string
	TavilyKey       string
	LogFormat       string
	LogLevel        string
	Workers         int
	// SendLimitsOff switches the outbound Telegram limiter off
	// (KAIROS_SEND_LIMITS=off; load benchmarks against a fake only).
	SendLimitsOff bool
	// Secrets are KAIROS_SECRET_<NAME> values by NAME.
	Secrets map[string]string
	// Profiling is KAIROS_CPU_PROFILE and KAIROS_PPROF (profile.go).
	Profiling profiling
}

// LoadConfig reads the environment, applying the documented defaults.
func LoadConfig(getenv func(string) string, environ func() []string) (Config, error) {
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		TelegramToken:   strings.TrimSpace(getenv("TELEGRAM_BOT_TOKEN")),
		TelegramAPIURL:  get("TELEGRAM_API_URL", "https://api.telegram.org"),
		OpenAIKey:       strings.TrimSpace(getenv("OPENAI_API_KEY")),
		OpenAIBaseURL:   get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
		Model:           get("KAIROS_MODEL", "gpt-4o-mini"),
		EmbeddingModel:  get("KAIROS_EMBEDDING_MODEL", ""),
		TranscribeModel: get("KAIROS_TRANSCRIBE_MODEL", "whisper-1"),
		TranscribeURL:   get("KAIROS_TRANSCRIBE_URL", ""),
		VisionModel:     get("KAIROS_VISION_MODEL", ""),
		DataDir:         get("KAIROS_DATA_DIR", "./data"),
		DatabaseURL:     get("KAIROS_DATABASE_URL", ""),
		PolicyPath:      get("KAIROS_POLICY", "./policy.yaml"),
		HTTPAddr:        get("KAIROS_HTTP_ADDR", "127.0.0.1:8080"),
		WebhookURL:      get("KAIROS_WEBHOOK_URL", ""),
		WebhookSecret:   strings.TrimSpace(getenv("KAIROS_WEBHOOK_SECRET")),
		SearchProvider:  get("KAIROS_SEARCH_PROVIDER", "searxng"),
		SearchURL:       get("KAIROS_SEARCH_URL", "http://localhost:8888"),
		BraveKey:        strings.TrimSpace(getenv("BRAVE_API_KEY")),
		TavilyKey:       strings.TrimSpace(getenv("TAVILY_API_KEY")),
		LogFormat:       get("KAIROS_LOG_FORMAT", "text"),
		LogLevel:        get("KAIROS_LOG_LEVEL", "info"),
		Secrets:         map[string]string{},
	}
	for _, f := range strings.Split(getenv("KAIROS_FALLBACK_MODELS"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			c.FallbackModels = append(c.FallbackModels, f)
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return c, usagef("KAIROS_LOG_FORMAT must be text or json, not %q", c.LogFormat)
	}
	switch c.SearchProvider {
	case "searxng", "brave", "tavily", "duckduckgo":
	default:
		return c, usagef("KAIROS_SEARCH_PROVIDER must be searxng, brave, tavily or duckduckgo, not %q", c.SearchProvider)
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("KAIROS_SEND_LIMITS"))); v {
	case "", "on":
	case "off":
		c.SendLimitsOff = true
	default:
		return c, usagef("KAIROS_SEND_LIMITS must be on or off, not %q", v)
	}
	if w := getenv("KAIROS_WORKERS"); w != "" {
		n := 0
		for _, r := range w {
			if r < '0' || r > '9' {
				return c, usagef("KAIROS_WORKERS must be a positive number, not %q", w)
			}
			n = n*10 + int(r-'0')
		}
		c.Workers = n
	}
	if v := strings.TrimSpace(getenv("KAIROS_EMBEDDING_DIMENSIONS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 8192 {
			return c, usagef("KAIROS_EMBEDDING_DIMENSIONS must be a number from 1 to 8192, not %q", v)
		}
		if c.EmbeddingModel == "" {
			return c, usagef("KAIROS_EMBEDDING_DIMENSIONS needs KAIROS_EMBEDDING_MODEL (without an embedding model there are no embeddings)")
		}
		c.EmbeddingDimensions = n
	}
	prof, err := loadProfiling(getenv, c.HTTPAddr)
	if err != nil {
		return c, err
	}
	c.Profiling = prof
	for _, kv := range environ() {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "KAIROS_SECRET_") && len(k) > len("KAIROS_SECRET_") && v != "" {
			c.Secrets[strings.TrimPrefix(k, "KAIROS_SECRET_")] = v
		}
	}
	return c, nil
}

// SecretNames lists the secrets by name, sorted.
func (c Config) SecretNames() []string {
	names := make([]string, 0, len(c.Secrets))
	for n := range c.Secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SensitiveValues are the values no log line may contain.
func (c Config) SensitiveValues() []string {
	vs := []string{c.TelegramToken, c.OpenAIKey, c.WebhookSecret, c.BraveKey, c.TavilyKey}
	for _, v := range c.Secrets {
		vs = append(vs, v)
	}
	if c.DatabaseURL != "" {
		if i := strings.Index(c.DatabaseURL, "://"); i >= 0 {
			if at := strings.LastIndex(c.DatabaseURL, "@"); at > i {
				if _, pw, ok := strings.Cut(c.DatabaseURL[i+3:at], ":"); ok {
					vs = append(vs, pw)
				}
			}
		}
	}
	out := vs[:0]
	for _, v := range vs {
		if len(v) >= 5 {
			out = append(out, v)
		}
	}
	return out
}

package main

import (
	"fmt"
	"net"
	"net/url"
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
	// PolicySet: KAIROS_POLICY was given, so a missing file is an error
	// rather than the built-in defaults.
	PolicySet bool
	HTTPAddr  string
	// ConsoleURL is the public base of console sign-in links
	// (KAIROS_CONSOLE_URL; empty: http:// and the admin listener's address).
	ConsoleURL     string
	WebhookURL     string
	WebhookSecret  string
	SearchProvider string
	SearchURL      string
	BraveKey       string
	TavilyKey      string
	LogFormat      string
	LogLevel       string
	Workers        int
	// SendLimitsOff switches the outbound Telegram limiter off
	// (KAIROS_SEND_LIMITS=off; load benchmarks against a fake only).
	SendLimitsOff bool
	// ReplicaID is KAIROS_REPLICA_ID: this process's name among replicas
	// sharing a database (default: host name and data directory, run.go).
	ReplicaID string
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
		ConsoleURL:      get("KAIROS_CONSOLE_URL", ""),
		WebhookURL:      get("KAIROS_WEBHOOK_URL", ""),
		WebhookSecret:   strings.TrimSpace(getenv("KAIROS_WEBHOOK_SECRET")),
		ReplicaID:       strings.TrimSpace(getenv("KAIROS_REPLICA_ID")),
		SearchProvider:  get("KAIROS_SEARCH_PROVIDER", "searxng"),
		SearchURL:       get("KAIROS_SEARCH_URL", "http://localhost:8888"),
		BraveKey:        strings.TrimSpace(getenv("BRAVE_API_KEY")),
		TavilyKey:       strings.TrimSpace(getenv("TAVILY_API_KEY")),
		LogFormat:       get("KAIROS_LOG_FORMAT", "text"),
		LogLevel:        get("KAIROS_LOG_LEVEL", "info"),
		Secrets:         map[string]string{},
	}
	c.PolicySet = strings.TrimSpace(getenv("KAIROS_POLICY")) != ""
	for _, f := range strings.Split(getenv("KAIROS_FALLBACK_MODELS"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			c.FallbackModels = append(c.FallbackModels, f)
		}
	}
	if err := c.validate(getenv); err != nil {
		return c, err
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

// validate checks every value against doc/config.md; the error names the
// variable (exit 2, before anything starts).
func (c *Config) validate(getenv func(string) string) error {
	if err := oneOf("KAIROS_LOG_FORMAT", c.LogFormat, "text", "json"); err != nil {
		return err
	}
	c.LogLevel = strings.ToLower(c.LogLevel)
	if err := oneOf("KAIROS_LOG_LEVEL", c.LogLevel, "debug", "info", "warn", "error"); err != nil {
		return err
	}
	if err := oneOf("KAIROS_SEARCH_PROVIDER", c.SearchProvider, "searxng", "brave", "tavily", "duckduckgo"); err != nil {
		return err
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("KAIROS_SEND_LIMITS"))); v {
	case "", "on":
	case "off":
		c.SendLimitsOff = true
	default:
		return usagef("KAIROS_SEND_LIMITS must be on or off, not %q", v)
	}
	if w := strings.TrimSpace(getenv("KAIROS_WORKERS")); w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 || n > 1024 {
			return usagef("KAIROS_WORKERS must be a number from 1 to 1024, not %q", w)
		}
		c.Workers = n
	}
	if v := strings.TrimSpace(getenv("KAIROS_EMBEDDING_DIMENSIONS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 8192 {
			return usagef("KAIROS_EMBEDDING_DIMENSIONS must be a number from 1 to 8192, not %q", v)
		}
		if c.EmbeddingModel == "" {
			return usagef("KAIROS_EMBEDDING_DIMENSIONS needs KAIROS_EMBEDDING_MODEL (without an embedding model there are no embeddings)")
		}
		c.EmbeddingDimensions = n
	}
	for _, u := range []struct{ name, val string }{
		{"OPENAI_BASE_URL", c.OpenAIBaseURL}, {"TELEGRAM_API_URL", c.TelegramAPIURL},
		{"KAIROS_TRANSCRIBE_URL", c.TranscribeURL}, {"KAIROS_WEBHOOK_URL", c.WebhookURL},
		{"KAIROS_SEARCH_URL", searchBase(*c)},
	} {
		if err := checkURL(u.name, u.val); err != nil {
			return err
		}
	}
	if err := checkAddr("KAIROS_HTTP_ADDR", c.HTTPAddr); err != nil {
		return err
	}
	return checkDatabaseURL(c.DatabaseURL)
}

func oneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef("%s must be %s, not %q", name, strings.Join(allowed, ", "), v)
}

// checkURL accepts an empty value (the default applies) or an absolute
// http(s) URL with a host.
func checkURL(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("%s must be an http:// or https:// URL with a host, not %q", name, redactURL(v))
	}
	return nil
}

// checkAddr accepts host:port with a port from 0 to 65535 (host may be
// empty: every interface).
func checkAddr(name, v string) error {
	_, port, err := net.SplitHostPort(v)
	if err == nil {
		var n int
		if n, err = strconv.Atoi(port); err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port out of range")
		}
	}
	if err != nil {
		return usagef("%s must be host:port (e.g. 127.0.0.1:8080), not %q", name, v)
	}
	return nil
}

// checkDatabaseURL accepts empty (SQLite in KAIROS_DATA_DIR) or a
// postgres:// URL; the message never shows the password.
func checkDatabaseURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return usagef("KAIROS_DATABASE_URL must be a postgres://user:password@host/db URL (empty: SQLite in KAIROS_DATA_DIR), not %q", redactURL(v))
	}
	return nil
}

// redactURL hides a URL's password (and anything after a scheme's "//"
// up to "@" when the URL does not parse).
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil {
		return u.Redacted()
	}
	if i, at := strings.Index(v, "//"), strings.LastIndex(v, "@"); i >= 0 && at > i {
		return v[:i+2] + "xxxxx" + v[at:]
	}
	return v
}

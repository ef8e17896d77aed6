// Package tokens counts tokens the way the model will: with tiktoken's
// BPE encodings for OpenAI's model families (o200k_base, cl100k_base,
// loaded from files embedded in the binary, no download), and with
// fit.Estimate for every other model, whose tokenizer Kairos
// does not have.
//
// It must not reach the network: the BPE files come from
// github.com/pkoukk/tiktoken-go-loader's embedded copies.
package tokens

// Package server is Perch's OpenAI-compatible local API: GET /v1/models,
// GET /v1/models/{id}, POST /v1/chat/completions (streaming SSE or one
// JSON answer) and GET /health, in front of one engine.Generator.
//
// Exported API (used by `perch serve` and the GUI's "Enable local API"):
//
//	s := server.New(server.Options{Engine: gen, Model: server.ModelInfo{ID, Vision, Audio, Video, ...},
//	        APIKey: key, Fetcher: nil /* fetch.New(fetch.Options{}) */})
//	addr, err := s.Start("127.0.0.1:8080")   // or s.Serve(listener); refuses non-loopback without a key
//	s.SetModel(gen, info)                     // swap models without restarting; nil gen answers 503
//	err = s.Shutdown(ctx)
//	h := s.Handler()                          // the guarded http.Handler, for tests or embedding
//	server.CheckListenAddr(addr, key)
//
// Requests: messages with string content or parts of type text,
// image_url (data: and http(s) through the media fetch guard), input_audio
// (base64), audio_url and video_url; temperature, top_p, top_k, min_p,
// repetition_penalty, max_tokens / max_completion_tokens, seed, stop,
// stream, stream_options.include_usage, chat_template_kwargs.enable_thinking
// (thinking streams as delta.reasoning_content, as vLLM and LM Studio do);
// tools, tool_choice (auto, none, required, a named function),
// parallel_tool_calls and response_format (text, json_object, json_schema;
// constrained by the engine's grammar), assistant tool_calls and role
// "tool" messages. Calls answer as message.tool_calls (content null when
// there is nothing else) or streamed delta.tool_calls (index, id, type and
// name first, then the arguments in pieces), with finish_reason
// "tool_calls". n > 1 and logprobs are refused with a 400 naming the
// parameter rather than ignored. Any "model" value is
// accepted and answered by the loaded model (as LM Studio does with one
// model loaded); answers carry the loaded model's id.
//
// Every request goes to the engine's single queue; a full queue answers
// 429 with Retry-After at once; a client that disconnects cancels its
// generation through the request context. Guards: loopback Host names
// only (DNS rebinding), Origin limited to loopback pages (CORS echoes the
// origin, never "*"), optional bearer key (constant-time compare; /health
// stays open), a 64 MiB body limit, and media size caps from the fetch
// guard. Errors use OpenAI's {"error": {message, type, param, code}} shape.
//
// It owns one thing, the API's wire, and every file is a side of it:
// reading a request into the engine's (openai.go, tools.go: pure, fuzzed),
// writing the answer as JSON or SSE (chat.go, stream.go, errors.go), the
// listener's guards and model swap (server.go), and which model ids it
// answers to (adapters.go, library.go). Nothing else in Perch parses this
// wire, and the parsing means nothing without the handler it feeds.
package server

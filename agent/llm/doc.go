// Package llm is an agent.Planner that asks a language model what to do, over any
// OpenAI-compatible chat-completions endpoint with tools and streaming: Ollama, llama.cpp's
// server, vLLM, or a cloud service. It uses github.com/openai/openai-go/v3.
//
// # One turn
//
// A turn sends the system prompt, the session's history (agent.TurnContext.History) and what was
// just said, with every tool of agent.TurnContext.Tools declared as a function with its JSON
// Schema. The answer is streamed:
//   - text deltas go to TurnContext.Chunk as they arrive;
//   - reasoning, where the endpoint sends it ("reasoning_content" from DeepSeek, llama.cpp and
//     older vLLM, "reasoning" from Ollama and newer vLLM), goes to TurnContext.Thought and is never
//     part of the reply;
//   - tool calls are put back together from their fragments, run one after the other with
//     TurnContext.Call, and their results fed back as tool messages; then the model is asked
//     again.
//
// The turn ends when the model answers without calling a tool. A model that keeps calling tools
// ends it with ErrToolRounds after Options.MaxToolRounds rounds.
//
// # What the model is told, and what ends the turn
//
// Mistakes a model can correct are told to it as the tool's result, starting "error: ": a tool
// that answered an *agent.ToolError, arguments that are not JSON, a tool it made up. Everything
// else ends the turn with an error: agent.ErrDeviceGone, the turn's deadline, and every problem
// with the endpoint, as an *EndpointError that names the endpoint's URL (never the API key):
// connection refused, no complete answer within Options.Timeout (ErrTimeout), a non-2xx status
// (with the endpoint's own message), a body that is not an event stream, a chunk that is not
// JSON, an error event, or a stream cut before its finish_reason.
//
// Requests are never retried (the SDK's retries are set to 0): a turn has a person waiting and
// a deadline, and retrying a server that is down or overloaded only makes both worse.
//
// The SDK's environment variables (OPENAI_API_KEY, OPENAI_BASE_URL, ...) are ignored on purpose:
// the endpoint and key are exactly what Options say, so a cloud key in the environment is never
// sent to a local server.
package llm

// Drives a Perch server with the real clients agents and IDEs use: the
// OpenAI JS SDK, the Vercel AI SDK and the OpenAI Agents SDK. Every tool
// call's arguments are checked against its schema with ajv. Prints one JSON
// object: {"results": [{"name", "ok", "error", "calls": [...]}]}.
//
// usage: node clients.mjs BASE_URL MODEL MODE [ROUNDS]
//   MODE all: every scenario; constrained: those whose calls the server
//   must constrain (tool_choice required or a named function, a response
//   schema), for a model with random weights. (runTools needs the model to
//   choose a call under tool_choice auto, so it runs in "all" only.)
import OpenAI from 'openai';
import { generateText, generateObject, streamText, jsonSchema, tool as aiTool, stepCountIs } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent, run, tool as agentTool, setTracingDisabled, OpenAIChatCompletionsModel } from '@openai/agents';
import Ajv from 'ajv';

const [base, model, mode, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg || 1);
const ajv = new Ajv({ strict: false });

const weatherSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 40 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
};
const validWeather = ajv.compile(weatherSchema);
const objectSchema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 20 }, legs: { type: 'integer', minimum: 0, maximum: 8 } },
  required: ['name', 'legs'],
  additionalProperties: false,
};
const validObject = ajv.compile(objectSchema);
const weatherTool = { type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters: weatherSchema } };
const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
const calls = []; // every call's arguments, validated
// Every request gets its own seed (reproducible runs) and at most one call
// (a random model given room for more runs out of tokens mid-call).
let seedN = 0;
const seed = () => ++seedN;
const one = { parallel_tool_calls: false };

function check(name, args) {
  const value = typeof args === 'string' ? JSON.parse(args) : args;
  const ok = validWeather(value);
  calls.push({ name, arguments: value, valid: ok, errors: ok ? undefined : ajv.errorsText(validWeather.errors) });
  if (!ok) throw new Error(`${name} arguments ${JSON.stringify(value)} fail the schema: ${ajv.errorsText(validWeather.errors)}`);
  return value;
}

const scenarios = {
  // tools + tool_choice "required", not streamed.
  async 'openai tools required'() {
    const r = await client.chat.completions.create({ model, messages, tools: [weatherTool], tool_choice: 'required', temperature: 1, max_tokens: 96, seed: seed(), ...one });
    const c = r.choices[0];
    if (c.finish_reason !== 'tool_calls' || !c.message.tool_calls?.length) throw new Error('no tool call: ' + JSON.stringify(c));
    if (c.message.content !== null) throw new Error('content beside only calls: ' + JSON.stringify(c.message.content));
    for (const tc of c.message.tool_calls) {
      if (!tc.id || tc.type !== 'function' || tc.function.name !== 'get_weather') throw new Error('call ' + JSON.stringify(tc));
      check('openai tools required', tc.function.arguments);
    }
  },
  // The same, streamed: the SDK's own accumulator rebuilds the calls.
  async 'openai tools required, streamed'() {
    const stream = client.chat.completions.stream({ model, messages, tools: [weatherTool], tool_choice: 'required', temperature: 1, max_tokens: 96, seed: seed(), ...one });
    const r = await stream.finalChatCompletion();
    const c = r.choices[0];
    if (c.finish_reason !== 'tool_calls' || !c.message.tool_calls?.length) throw new Error('no tool call: ' + JSON.stringify(c));
    for (const tc of c.message.tool_calls) {
      if (!tc.id || tc.function.name !== 'get_weather') throw new Error('call ' + JSON.stringify(tc));
      check('openai tools required, streamed', tc.function.arguments);
    }
  },
  // runTools: call -> our function -> the model's answer.
  async 'openai runTools round trip'() {
    if (mode !== 'all') return 'skip';
    let ran = 0;
    const runner = client.chat.completions.runTools({
      model, messages, temperature: 1, max_tokens: 96, tool_choice: 'auto',
      tools: [{ type: 'function', function: { ...weatherTool.function, parse: JSON.parse,
        function: (args) => { ran++; check('openai runTools round trip', args); return { temperature: 18, sky: 'partly cloudy' }; } } }],
    }, { maxChatCompletions: 3 });
    const final = await runner.finalChatCompletion();
    const all = runner.allChatCompletions();
    if (ran < 1) throw new Error('the function never ran');
    const toolMsgs = runner.messages.filter((m) => m.role === 'tool');
    if (!toolMsgs.length) throw new Error('no tool result went back to the model');
    if (all.length < 2 || final.choices[0].finish_reason !== 'stop' || !final.choices[0].message.content) throw new Error(`${all.length} completions; the loop did not reach an answer`);
  },
  // Vercel AI SDK: generateText with a tool (executed), then the answer.
  async 'ai generateText with a tool'() {
    const provider = createOpenAICompatible({ name: 'perch', baseURL: base + '/v1' });
    let ran = 0;
    const r = await generateText({
      model: provider(model), prompt: 'What is the weather in Paris?', temperature: 1, maxOutputTokens: 96, seed: seed(),
      toolChoice: 'required', stopWhen: stepCountIs(1), providerOptions: { perch: one },
      tools: { get_weather: aiTool({ description: 'The weather of a city', inputSchema: jsonSchema(weatherSchema),
        execute: async (input) => { ran++; check('ai generateText with a tool', input); return { temperature: 18 }; } }) },
    });
    if (!r.toolCalls.length || ran !== r.toolCalls.length || r.finishReason !== 'tool-calls') throw new Error(`calls ${r.toolCalls.length}, ran ${ran}, finish ${r.finishReason}`);
    if (!r.toolResults.length) throw new Error('no tool results');
  },
  // Vercel AI SDK streaming (what opencode does): tool calls recognised.
  async 'ai streamText with a tool'() {
    const provider = createOpenAICompatible({ name: 'perch', baseURL: base + '/v1' });
    const r = streamText({
      model: provider(model), prompt: 'What is the weather in Paris?', temperature: 1, maxOutputTokens: 96, toolChoice: 'required',
      seed: seed(), providerOptions: { perch: one },
      tools: { get_weather: aiTool({ description: 'The weather of a city', inputSchema: jsonSchema(weatherSchema) }) },
    });
    const tcs = await r.toolCalls;
    if (!tcs.length || (await r.finishReason) !== 'tool-calls') throw new Error(`calls ${tcs.length}, finish ${await r.finishReason}`);
    for (const tc of tcs) {
      if (tc.toolName !== 'get_weather' || tc.invalid) throw new Error('call ' + JSON.stringify(tc));
      check('ai streamText with a tool', tc.input);
    }
  },
  // Vercel AI SDK: generateObject with a schema (response_format json_schema).
  async 'ai generateObject'() {
    const provider = createOpenAICompatible({ name: 'perch', baseURL: base + '/v1', supportsStructuredOutputs: true });
    const r = await generateObject({ model: provider(model), schema: jsonSchema(objectSchema), prompt: 'Describe a perch.', temperature: 1, maxOutputTokens: 96, seed: seed() });
    if (!validObject(r.object)) throw new Error('object ' + JSON.stringify(r.object) + ': ' + ajv.errorsText(validObject.errors));
  },
  // OpenAI Agents SDK: a function tool over the Chat Completions model.
  async 'agents function tool'() {
    setTracingDisabled(true);
    let ran = 0;
    const agent = new Agent({
      name: 'weather', instructions: 'Answer with the weather tool.',
      model: new OpenAIChatCompletionsModel(client, model),
      modelSettings: { toolChoice: 'required', temperature: 1, maxTokens: 96, parallelToolCalls: false, providerData: { seed: seed() } },
      // With random weights only the constrained call makes sense: its
      // result is the answer. ("all" lets the model answer after it.)
      ...(mode === 'all' ? {} : { toolUseBehavior: 'stop_on_first_tool' }),
      tools: [agentTool({ name: 'get_weather', description: 'The weather of a city', parameters: weatherSchema, strict: true,
        execute: async (input) => { ran++; check('agents function tool', input); return 'Sunny, 18C'; } })],
    });
    const result = await run(agent, 'What is the weather in Paris?', { maxTurns: 4 });
    if (ran < 1) throw new Error('the tool never ran');
    if (typeof result.finalOutput !== 'string' || (mode !== 'all' && result.finalOutput !== 'Sunny, 18C')) throw new Error('final output ' + JSON.stringify(result.finalOutput));
  },
};

const results = [];
for (let i = 0; i < rounds; i++) {
  for (const [name, fn] of Object.entries(scenarios)) {
    try {
      if ((await fn()) === 'skip') continue;
      results.push({ name, ok: true });
    } catch (e) {
      results.push({ name, ok: false, error: String(e?.stack || e).slice(0, 2000) });
    }
  }
}
console.log(JSON.stringify({ results, calls }));

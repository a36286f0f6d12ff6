#!/usr/bin/env python3
"""400 random conversations rendered by Python's Jinja2 (configured as HF's
apply_chat_template, see ../jinja/testdata/oracle.py) with the real Gemma 4
chat template: odd whitespace and Unicode, media parts, tool calls with
nested int/float/None/bool arguments, OpenAI tool messages, Gemma's native
tool_responses, random tool schemas, thinking on/off/unset. Writes
template-random.json.gz (the rendered text, or the Python error).

    python3 random_renders.py      (needs jinja2; written with 3.1.6)
"""
import gzip
import json
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(here, "..", "jinja", "testdata"))
from oracle import environment  # noqa: E402

random.seed(11)
env = environment()
with open(os.path.join(here, "..", "..", "tokenizer", "testdata", "tiny", "chat_template.jinja"), encoding="utf-8") as f:
    tmpl = env.from_string(f.read())
words = ["hi", "  spaced  ", "\ttab", "é", "😀", "<turn|>", "<|channel>thought\nx<channel|>y", "\u00a0nbsp\u00a0", "\x1c", "line\nbreak", "", "Hello, world!", "3.0", "None"]
def rval(d=0):
    r = random.random()
    if d > 2 or r < 0.5:
        return random.choice([1, -7, 0, 2.5, 3.0, -0.0, 1e20, 1.5e-07, 123456789.125, True, False, None, "s", "  x ", "é😀", 9007199254740993])
    if r < 0.75:
        return [rval(d+1) for _ in range(random.randint(0, 3))]
    return {random.choice(["a", "B", "z_k", "key", "Zeta", "m"]): rval(d+1) for _ in range(random.randint(0, 3))}
def rtool():
    props = {}
    for _ in range(random.randint(0, 3)):
        t = random.choice(["string", "integer", "number", "boolean", "array", "object"])
        p = {"type": t}
        if random.random() < 0.6: p["description"] = random.choice(words[:6])
        if t == "string" and random.random() < 0.4: p["enum"] = ["a", "b c"]
        if t == "array" and random.random() < 0.6: p["items"] = {"type": "string"}
        if t == "object" and random.random() < 0.5: p["properties"] = {"x": {"type": "integer"}}; p["required"] = ["x"]
        if random.random() < 0.2: p["nullable"] = True
        props[random.choice(["loc", "Unit", "n", "q", "deep", "flag"])] = p
    params = {"type": "object", "properties": props}
    if props and random.random() < 0.6: params["required"] = list(props)[:1]
    fn = {"name": random.choice(["get_weather", "search", "f"]), "description": random.choice(words[:8]), "parameters": params}
    if random.random() < 0.2: fn["response"] = {"type": "object", "description": "r"}
    return {"type": "function", "function": fn}
cases = []
for i in range(400):
    msgs = []
    if random.random() < 0.4: msgs.append({"role": random.choice(["system", "developer"]), "content": random.choice(words)})
    for t in range(random.randint(1, 4)):
        if random.random() < 0.3:
            msgs.append({"role": "user", "content": [random.choice([{"type": "text", "text": random.choice(words)}, {"type": "image"}, {"type": "audio"}, {"type": "video"}]) for _ in range(random.randint(1, 3))]})
        else:
            msgs.append({"role": "user", "content": random.choice(words)})
        r = random.random()
        if r < 0.3:
            m = {"role": "assistant", "tool_calls": [{"id": "c%d" % t, "type": "function", "function": {"name": "get_weather", "arguments": rval(0) if random.random() < 0.2 else {k: rval(1) for k in random.sample(["city", "B", "a", "n"], random.randint(0, 3))}}}]}
            if random.random() < 0.5: m["content"] = random.choice(["", None, "ok"])
            if random.random() < 0.3: m["reasoning_content"] = "think"
            msgs.append(m)
            if random.random() < 0.7:
                msgs.append({"role": "tool", "tool_call_id": "c%d" % t, "content": random.choice(["18C", 12.5, [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], {"k": 1}])})
        elif r < 0.5:
            msgs.append({"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"x": rval(1)}}}], "tool_responses": [{"name": "f", "response": rval(0)}]})
        elif r < 0.9:
            msgs.append({"role": "assistant", "content": random.choice(words)})
    tools = [rtool() for _ in range(random.randint(0, 2))] or None
    agp = random.random() < 0.8
    kw = {}
    if random.random() < 0.3: kw["enable_thinking"] = random.random() < 0.7
    rec = {"name": "r%d" % i, "messages": msgs, "tools": tools, "add_generation_prompt": agp, "template_kwargs": kw}
    try:
        rec["rendered"] = tmpl.render(messages=msgs, tools=tools, documents=None, add_generation_prompt=agp, bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", **kw)
    except Exception as e:
        rec["error"] = type(e).__name__ + ": " + str(e)
    cases.append(rec)
with gzip.open(os.path.join(here, "template-random.json.gz"), "wt", encoding="utf-8") as f:
    json.dump({"renderer": "jinja2 %s (HF apply_chat_template environment)" % __import__("jinja2").__version__, "cases": cases}, f, ensure_ascii=False)
print(len(cases), sum(1 for c in cases if "error" in c), "errors")

#!/usr/bin/env python3
"""Renders conversations with the two sizes' Gemma-4 chat templates
(gemma4-e2b-e4b.jinja, gemma4-26b-31b.jinja: see README.md) by Python's
Jinja2 configured as HF's apply_chat_template (../jinja/testdata/oracle.py),
thinking on, off and unset, and writes template-sizes.json: the rendered
text of each. The token ids are then added by the JavaScript tokenizer
oracle on the Gemma-4 test tokenizer:

    python3 size_renders.py && node ../../tokenizer/testdata/oracle/oracle.js \
        template-ids ../../../testdata/cache/tokenizer template-sizes.json
"""
import json
import os
import sys

import jinja2

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(here, "..", "jinja", "testdata"))
from oracle import environment  # noqa: E402

env = environment()
templates = {}
for size in ["e2b-e4b", "26b-31b"]:
    with open(os.path.join(here, "gemma4-%s.jinja" % size), encoding="utf-8") as f:
        templates[size] = env.from_string(f.read())
weather = {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
                          "required": ["city"]}}}
conversations = {
    "one_turn": [{"role": "user", "content": "What bird is this?"}],
    "system_and_turns": [{"role": "system", "content": "Answer briefly."},
                         {"role": "user", "content": "Hi"},
                         {"role": "assistant", "content": "<|channel>thought\nThe user greets.<channel|>Hello!"},
                         {"role": "user", "content": "Name a heron."}],
    "image_and_audio": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe it."}, {"type": "audio"}]}],
    "tool_round_trip": [{"role": "user", "content": "Weather in Paris?"},
                        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                        {"role": "tool", "tool_call_id": "c1", "content": "18C and clear"}],
}
cases = []
for size, tmpl in templates.items():
    for name, msgs in conversations.items():
        for thinking in [True, False, None]:
            kw = {} if thinking is None else {"enable_thinking": thinking}
            tools = [weather] if name == "tool_round_trip" else None
            rendered = tmpl.render(messages=msgs, tools=tools, add_generation_prompt=True, bos_token="<bos>",
                                   eos_token="<eos>", **kw)
            cases.append({"name": "%s/%s/thinking=%s" % (size, name, thinking), "template": "gemma4-%s.jinja" % size,
                          "messages": msgs, "tools": tools, "add_generation_prompt": True, "template_kwargs": kw,
                          "rendered": rendered})
with open(os.path.join(here, "template-sizes.json"), "w", encoding="utf-8") as f:
    json.dump({"renderer": "jinja2 %s (HF apply_chat_template environment) on Python %s" % (jinja2.__version__, sys.version.split()[0]),
               "cases": cases}, f, ensure_ascii=False, indent=1)
    f.write("\n")
print(len(cases), "cases")

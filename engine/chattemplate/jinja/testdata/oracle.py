#!/usr/bin/env python3
"""Python Jinja2 oracle for the Go interpreter.

Renders every case in cases.json with Jinja2 configured as Hugging Face's
apply_chat_template configures it (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, HF's tojson and raise_exception,
strftime_now at a fixed time) and writes jinja-golden.json next to it:
the rendered text, or "error": true when Jinja2 raises.

    python3 oracle.py          (needs jinja2; written with 3.1.6)
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

NOW = datetime.datetime(2026, 4, 11, 9, 5, 7)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' utils/chat_template_utils.py
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return NOW.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    env = environment()
    out = []
    for c in cases:
        rec = {"name": c["name"], "template": c["template"], "vars": c.get("vars", {})}
        try:
            rec["output"] = env.from_string(c["template"]).render(**rec["vars"])
        except Exception as e:  # noqa: BLE001 - any failure is an expected error
            rec["error"] = True
            rec["python_error"] = type(e).__name__ + ": " + str(e)[:200]
        out.append(rec)
    meta = {"oracle": "jinja2 %s on Python %s" % (jinja2.__version__, sys.version.split()[0]),
            "environment": "ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) + HF tojson/raise_exception/strftime_now",
            "now": NOW.isoformat(), "cases": out}
    with open(os.path.join(here, "jinja-golden.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%d cases, %d errors" % (len(out), sum(1 for r in out if r.get("error"))))


if __name__ == "__main__":
    main()

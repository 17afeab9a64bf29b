// A hostile bot for the sandbox tests: allocates and fills memory without end (Node).
"use strict";
const readline = require("readline");

const hoard = [];

function report(key, value) {
  process.stderr.write(`HOSTILE ${key}\t${value}\n`);
}

function attack() {
  for (;;) {
    hoard.push(Buffer.alloc(16 << 20, 1));
    report("allocated_mb", 16 * hoard.length);
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    process.stdout.write(JSON.stringify({ type: "ready", protocol: 1 }) + "\n");
  } else if (msg.type === "request") {
    attack();
  } else if (msg.type === "match_end" || msg.type === "shutdown") {
    process.exit(0);
  }
});

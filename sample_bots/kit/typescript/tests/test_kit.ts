// Unit tests of the TypeScript kit (the JavaScript kit with its types): answering, delta
// rebuilds, malformed input. Compiled with tsc together with recorder.ts and the kit's
// kozyri_bot.d.ts, then run with node (NODE_PATH naming the JavaScript kit):
//
//   tsc --strict --target es2020 --module commonjs --outDir out ../kozyri_bot.d.ts *.ts
//   NODE_PATH=../../js node out/test_kit.js [DELTAS]
//
// DELTAS (optional) is a file of JSON lines {"delta": ...}, deltas as the referee sends them,
// some with "full": the observation rebuilt by then ({"reset": true} starts a new sequence).
import { Delta, Json, applyDelta, beats, rank, suit } from "kozyri_bot";

// Node's own modules, typed only as far as used here (no @types packages at build time).
interface Spawned { status: number | null; stdout: string; stderr: string }
declare const require: (name: string) => any;
declare const process: { argv: string[]; execPath: string; env: { [key: string]: string | undefined } };
declare const __dirname: string;
const childProcess = require("child_process");
const fs = require("fs");
const path = require("path");

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

function converse(lines: string[]): Spawned {
  return childProcess.spawnSync(process.execPath, [path.join(__dirname, "recorder.js")], {
    input: lines.join("\n") + "\n",
    encoding: "utf8",
    env: process.env,
  });
}

function testConversation(): void {
  const done = converse([
    '{"type":"hello","protocol":1,"game":"svoi-kozyri","players":3,"seat":1}',
    "",
    '{"type":"request","id":7,"deal":0,"observation":{"game":"svoi-kozyri","deal":0,"hand":["8H","TD"],"pile":[]},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}',
    '{"type":"error","id":7,"status":"timeout","message":"late"}',
    '{"type":"request","id":8,"deal":0,"delta":{"set":{"hand":["TD","9S","AC"]},"append":{"pile":["8H"]}},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}',
    '{"type":"deal_end","deal":0,"delta":{"set":{"deal":1},"drop":["pile"]}}',
    '{"type":"match_end","place":1}',
    '{"type":"shutdown"}',
    '{"type":"request","never":"read"}',
  ]);
  assert(done.status === 0, `exit ${done.status}: ${done.stderr}`);
  const expected = [
    '{"type":"ready","protocol":1,"name":"tést","observations":"delta"}',
    '{"type":"action","id":7,"index":1,"debug":"say \\"hi\\""}',
    '{"type":"action","id":8,"index":1,"debug":"say \\"hi\\""}',
    "",
  ].join("\n");
  assert(done.stdout === expected, `stdout:\n${done.stdout}`);
  assert(done.stderr.includes("request seat=1 hand=8H,TD cards=8H,-"), done.stderr);
  assert(done.stderr.includes("request seat=1 hand=TD,9S,AC cards=8H,-"), done.stderr);
  assert(done.stderr.includes("referee: timeout late"), done.stderr);
  assert(done.stderr.includes('deal_end {"game":"svoi-kozyri","deal":1,"hand":["TD","9S","AC"]}'), done.stderr);
}

function testMalformedMessages(): void {
  const cases: [string[], string][] = [
    [['{"type":"hello","seat":0}', '{"type":"request","observ'], "(line 2): "],
    [["[1,2]"], "(line 1): not a JSON object"],
  ];
  for (const [lines, expected] of cases) {
    const done = converse(lines);
    assert(done.status === 1, `exit ${done.status} for ${lines}`);
    assert(done.stderr.includes(`malformed message from the referee ${expected}`), done.stderr);
    assert(!done.stdout.includes('"type":"action"'), done.stdout);
  }
}

function testCards(): void {
  assert(rank("TH") === 10 && rank("AS") === 14 && suit("TH") === "H");
  assert(beats("QH", "TH", "S") && beats("6S", "AH", "S") && !beats("6D", "AH", "S"));
}

/** The same JSON text for the same JSON value (member order aside). */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function testDeltas(file: string): number {
  let kept: { [key: string]: Json } = {};
  let checked = 0;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { reset?: true; delta: Delta; full?: Json };
    if (entry.reset) {
      kept = {};
      continue;
    }
    applyDelta(kept, entry.delta);
    if (entry.full === undefined) continue;
    assert(canonical(kept) === canonical(entry.full), `observation ${checked} differs`);
    checked += 1;
  }
  assert(checked > 0, "no observation to compare");
  return checked;
}

testConversation();
testMalformedMessages();
testCards();
const rebuilt = process.argv[2] ? testDeltas(process.argv[2]) : 0;
console.log(`ok (${rebuilt} observations rebuilt)`);

#!/usr/bin/env node
// The TypeScript side of compare.sh: runs workload files through the
// @anthropic-ai/sdk memory tool handler (BetaLocalFilesystemMemoryTool
// wrapped by betaMemoryTool), in this one process, one command after the
// other, the way the SDK's BetaToolRunner runs a tool call: tool.parse(input)
// then tool.run(); a thrown error becomes "Error: <message>" with is_error.
//
// Usage: node ts-driver.mjs <baseDir> <run> <answers-file|-> <workload.jsonl>...
//
// The memory root is <baseDir>/memories. It prints one result line per
// workload, in the format of the Go driver (bench exec). Must sit next to
// the node_modules that hold the SDK (compare.sh copies it there).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { toolErrorContent } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';

const [baseDir, runArg, answersTo, ...files] = process.argv.slice(2);
if (!baseDir || !runArg || !answersTo || files.length === 0) {
  process.stderr.write('usage: node ts-driver.mjs <baseDir> <run> <answers-file|-> <workload.jsonl>...\n');
  process.exit(2);
}

// Workloads are read and parsed before the clock starts: the handler gets
// tool inputs as objects, as it does from the SDK runner.
const workloads = files.map((f) => ({
  name: path.basename(f, '.jsonl'),
  lines: fs
    .readFileSync(f, 'utf-8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l)),
}));

const tool = betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(baseDir));

let seq = 0;
async function runCommand(input) {
  const toolUse = { type: 'tool_use', id: `toolu_bench_${seq++}`, name: 'memory', input };
  try {
    const parsed = tool.parse ? tool.parse(input) : input;
    return { is_error: false, content: await tool.run(parsed, { toolUse, toolUseBlock: toolUse }) };
  } catch (e) {
    return { is_error: true, content: toolErrorContent(e) };
  }
}

await runCommand({ command: 'view', path: '/memories' }); // warm-up, untimed, as in the Go driver

const answers = [];
for (const w of workloads) {
  const res = { impl: 'ts-sdk', workload: w.name, run: Number(runArg), ops: w.lines.length, seconds: 0, errors: 0, kinds: {} };
  const out = new Array(w.lines.length);
  const perOp = new Array(w.lines.length);
  const start = performance.now();
  for (let i = 0; i < w.lines.length; i++) {
    const t = performance.now();
    out[i] = await runCommand(w.lines[i].input);
    perOp[i] = performance.now() - t;
  }
  res.seconds = (performance.now() - start) / 1000;
  for (let i = 0; i < out.length; i++) {
    if (out[i].is_error) {
      res.errors++;
      if (res.errors === 1) {
        process.stderr.write(`ts-driver: ${w.name} command ${i} failed: ${JSON.stringify(out[i].content)}\n  input: ${JSON.stringify(w.lines[i].input)}\n`);
      }
    }
    const k = (res.kinds[w.lines[i].kind] ??= { n: 0, seconds: 0 });
    k.n++;
    k.seconds += perOp[i] / 1000;
  }
  answers.push(...out);
  process.stdout.write(JSON.stringify(res) + '\n');
}
if (answersTo !== '-') {
  fs.writeFileSync(answersTo, answers.map((a) => JSON.stringify(a)).join('\n') + '\n');
}

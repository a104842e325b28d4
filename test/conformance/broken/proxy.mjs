#!/usr/bin/env node
// A deliberately broken server for the conformance suite's own tests: the real sidecar behind
// an ndjson proxy that breaks exactly one documented behaviour, chosen by the first argument.
//   drop-ts               removes `ts` from every record a session/read result holds
//   answer-notifications  answers every client notification with an id-null error
//   wrong-code            answers SessionNotFound with the code of InvalidSessionId
// Usage: proxy.mjs <fault> <server command> [args...]
import { spawn } from 'node:child_process';
import readline from 'node:readline';

const [fault, cmd, ...args] = process.argv.slice(2);
const server = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
server.on('exit', (code, signal) => process.exit(signal ? 1 : code ?? 1));
process.stdin.on('end', () => server.stdin.end());

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (fault === 'answer-notifications') {
    try {
      const m = JSON.parse(line);
      if (m && m.method !== undefined && m.id === undefined) {
        process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'answered' } })}\n`);
      }
    } catch {}
  }
  server.stdin.write(`${line}\n`);
});

readline.createInterface({ input: server.stdout }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return void process.stdout.write(`${line}\n`);
  }
  if (fault === 'drop-ts' && Array.isArray(m.result?.records)) for (const r of m.result.records) delete r.ts;
  if (fault === 'wrong-code' && m.error?.code === -31001) m.error.code = -31002;
  process.stdout.write(`${JSON.stringify(m)}\n`);
});

import fs from 'node:fs';
import path from 'node:path';

/** Every file under `dir` (relative path → base64 bytes): to prove an operation changed nothing. No vitest here: the torture runner uses it too. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

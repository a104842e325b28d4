import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own name and version, from the package.json above this file (src/ or dist/src/). */
export function packageInfo(): { name: string; version: string } {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'session-sidecar') return { name: pkg.name, version: pkg.version ?? '0.0.0' };
    }
    dir = path.dirname(dir);
  }
  return { name: 'session-sidecar', version: '0.0.0' };
}

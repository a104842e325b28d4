import fs from 'node:fs';

/**
 * Human output of CLI subcommands (help, version, listings). Never used while serving: then
 * stdout carries protocol frames only.
 */
export function printOut(text: string): void {
  fs.writeSync(1, text);
}

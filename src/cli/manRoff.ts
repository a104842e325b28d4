/**
 * A help text as man(7) roff: the blocks of a usage text (separated by blank lines) become
 * a synopsis (`Usage:` lines, no-fill), option lists (`Options:`: one .TP per flag, its
 * description filled), filled paragraphs (prose at column 0) or indented no-fill blocks
 * (anything indented: examples, tables). Every `-` is `\-` (a flag copied from the page is a
 * flag), every backslash `\e`, and a line that would start with `.` or `'` is guarded.
 */

/** Text escaped for roff: backslashes, minus signs, and a leading control character. */
export function roffText(text: string): string {
  return text.replace(/\\/g, '\\e').replace(/-/g, '\\-').replace(/^([.'])/gm, '\\&$1')
    .replace(/[^\x00-\x7f]/gu, (c) => (c === '\u2014' ? '\\(em' : `\\[u${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}]`));
}

/** Filled text: words on source lines of at most 78 characters, each line escaped (so a word starting with `.` is guarded). */
export function filled(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > 78) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map(roffText).join('\n');
}

/** Bold flags (`--name`, `-x`) within escaped text. */
function boldFlags(escaped: string): string {
  return escaped.replace(/(^|[\s[(|,])((?:\\-){1,2}[A-Za-z][A-Za-z0-9\\-]*)/g, (_m, pre: string, flag: string) => `${pre}\\fB${flag}\\fR`);
}

const noFill = (lines: string[]) => ['.nf', ...lines.map((l) => roffText(l.trimEnd()) || '\\&'), '.fi'];

interface Option {
  term: string;
  description: string[];
}

/** The entries of an `Options:` block: a line starting with two spaces and a dash opens one; deeper lines continue it. */
function options(lines: string[]): Option[] {
  const entries: Option[] = [];
  for (const line of lines) {
    const opens = /^ {2}(-\S.*?)(?: {2,}(\S.*))?$/.exec(line);
    if (opens) {
      let term = opens[1] as string;
      let rest = opens[2];
      if (rest === undefined) {
        // `--json FILE write the ...`: the flag and an upper-case placeholder, then the text
        const m = /^(-\S+(?: [A-Z][A-Z_|.]*)?) (.*)$/.exec(term);
        if (m && /[a-z]/.test(m[2] as string)) [term, rest] = [m[1] as string, m[2]];
      }
      entries.push({ term, description: rest !== undefined ? [rest] : [] });
    } else entries.at(-1)?.description.push(line.trim());
  }
  return entries;
}

/** One usage block as roff lines. */
function block(text: string, first: boolean): string[] {
  const lines = text.split('\n');
  if (first && lines[0]?.startsWith('Usage:')) {
    const synopsis = lines.map((l) => l.replace(/^Usage: /, '').replace(/^ {7}/, ''));
    return ['.PP', ...noFill(synopsis).map((l, i) => (i === 0 || l === '.fi' ? l : boldFlags(l)))];
  }
  if (/^[A-Z][A-Za-z ()]*:$/.test(lines[0] ?? '') && lines.slice(1).some((l) => /^ {2}-/.test(l))) {
    const out = ['.PP', roffText(lines[0] as string)];
    for (const o of options(lines.slice(1))) out.push('.TP', boldFlags(roffText(o.term)), ...(o.description.length ? [filled(o.description.join(' '))] : []));
    return out;
  }
  if (lines.every((l) => !/^\s/.test(l))) return ['.PP', filled(lines.join(' '))];
  // a paragraph followed by indented lines (a list, examples): the paragraph filled, the rest as it is
  const lead = lines.findIndex((l) => /^\s/.test(l));
  const out = lead > 0 ? ['.PP', filled(lines.slice(0, lead).join(' '))] : [];
  return [...out, '.PP', '.RS 4', ...noFill(lines.slice(Math.max(lead, 0)).map((l) => l.replace(/^ {2}/, ''))), '.RE'];
}

/** A usage text as roff: its blocks in order. */
export function usageRoff(usage: string): string[] {
  const blocks = usage.replace(/\n+$/, '').split(/\n\s*\n/);
  return blocks.flatMap((b, i) => block(b, i === 0));
}

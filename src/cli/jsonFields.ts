import { UsageError } from './common.js';

/**
 * `--json [FIELDS]` (the gh convention): `--json` alone prints the whole objects, as always;
 * `--json a,b` (or `--json=a,b`) prints each object with only those fields, in that order, a
 * field an object lacks as null; a field the command does not know is a usage error listing
 * the known ones. parseArgs has no optional values: the FIELDS word is taken out of argv first
 * (`consumes` says whether the word after `--json` is FIELDS or the command's own argument).
 */
export type JsonChoice = { argv: string[]; fields?: string[] };

export function takeJsonFields(argv: string[], known: readonly string[], command: string, consumes: (word: string) => boolean = () => true): JsonChoice {
  const rest: string[] = [];
  let fields: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a.startsWith('--json=')) {
      fields = fieldList(a.slice('--json='.length), known, command);
      rest.push('--json');
      continue;
    }
    rest.push(a);
    const next = argv[i + 1];
    if (a === '--json' && next !== undefined && !next.startsWith('-') && consumes(next)) {
      fields = fieldList(next, known, command);
      i += 1;
    }
  }
  return fields ? { argv: rest, fields } : { argv: rest };
}

function fieldList(text: string, known: readonly string[], command: string): string[] {
  const fields = text.split(',').map((f) => f.trim()).filter((f) => f !== '');
  const unknown = fields.filter((f) => !known.includes(f));
  if (fields.length === 0 || unknown.length > 0) {
    throw new UsageError(`${fields.length === 0 ? '--json needs field names' : `unknown --json field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`}; available: ${known.join(', ')}`, command);
  }
  return fields;
}

/** The objects with only `fields` (absent ones null), or as they are without a selection. */
export function selected<T extends object>(items: T[], fields: string[] | undefined): unknown[] {
  if (!fields) return items;
  return items.map((item) => Object.fromEntries(fields.map((f) => [f, (item as Record<string, unknown>)[f] ?? null])));
}

/** The fields of the objects each command prints with --json. */
export const LIST_FIELDS = ['sessionId', 'title', 'createdAt', 'updatedAt', 'lastSeq', 'bytes', 'firstMessage', 'lastMessage', 'parent', 'cwd', 'tags', 'unreadable'] as const;
export const SEARCH_FIELDS = ['sessionId', 'seq', 'snippet'] as const;
export const TRASH_FIELDS = ['sessionId', 'title', 'deletedAt', 'bytes'] as const;

import { IN_BYTES, TrigramFilter } from './trigramFilter.js';

/**
 * Finds which of a fixed set of lower-case keywords occur in a text, case-insensitively, in one
 * pass: the text's trigrams are looked up in a bit table of the keywords' first three characters
 * (a two-character keyword admits every trigram of its pair) by a WebAssembly loop
 * (trigramFilter.ts), and only at the positions that pass are the keywords starting with that
 * pair compared. Linear in the text; ~1 ns a byte for the filter, where a JavaScript loop over
 * the characters costs several and one regular expression alternating ~300 literals 30-80.
 */
export class KeywordScanner {
  private readonly byPair = new Map<number, Array<{ word: string; bytes: Buffer }>>();
  private readonly filter: TrigramFilter;
  private readonly longest: number;

  constructor(readonly keywords: readonly string[]) {
    for (const k of keywords) {
      if (k.length < 2 || k !== k.toLowerCase() || /[^\x20-\x7e]/.test(k)) throw new Error(`keyword must be 2+ lower-case ASCII: ${k}`);
      const p = k.charCodeAt(0) * 128 + k.charCodeAt(1);
      this.byPair.set(p, [...(this.byPair.get(p) ?? []), { word: k, bytes: Buffer.from(k, 'ascii') }]);
    }
    this.filter = new TrigramFilter(keywords);
    this.longest = Math.max(2, ...keywords.map((k) => k.length));
  }

  /** The keywords that occur in `text`; stops early once `stopAfter` distinct ones were seen. */
  find(text: string, stopAfter = Infinity): Set<string> {
    const found = new Set<string>();
    this.scan(text, found, stopAfter);
    return found;
  }

  /** Whether any keyword occurs in `text`. */
  has(text: string): boolean {
    return this.scan(text, undefined, 1);
  }

  /**
   * find for a text of any size without holding the event loop: slices of `slice` characters
   * (overlapping as scan's), yielding between them.
   */
  async findSliced(text: string, slice = 64 << 10): Promise<Set<string>> {
    const found = new Set<string>();
    for (let from = 0; from < text.length; from += slice - (this.longest - 1)) {
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.scanSlice(text.slice(from, from + slice), found, Infinity);
      if (from + slice >= text.length) break;
    }
    return found;
  }

  /**
   * The text in slices the filter's memory holds (any character is at most 3 bytes of UTF-8),
   * each starting `longest - 1` characters before the last one ended, so that a keyword across
   * two slices is whole in the second. True once `stopAfter` keywords were seen.
   */
  private scan(text: string, found: Set<string> | undefined, stopAfter: number): boolean {
    const slice = Math.floor(IN_BYTES / 3) - 1;
    const names = found ?? new Set<string>();
    for (let from = 0; from < text.length; from += slice - (this.longest - 1)) {
      if (this.scanSlice(from === 0 && text.length <= slice ? text : text.slice(from, from + slice), names, stopAfter)) return true;
      if (from + slice >= text.length) break;
    }
    return false;
  }

  /** One slice (at most IN_BYTES / 3 characters) into `names`; true once `stopAfter` names were seen in all. */
  private scanSlice(text: string, names: Set<string>, stopAfter: number): boolean {
    let done = false;
    this.filter.candidates(text, (bytes, at) => {
      for (const { word, bytes: k } of this.byPair.get(fold(bytes[at] as number) * 128 + fold(bytes[at + 1] as number)) ?? []) {
        if (!names.has(word) && matchesAt(bytes, at, k)) {
          names.add(word);
          if (names.size >= stopAfter) return (done = true);
        }
      }
      return false;
    });
    return done;
  }
}

function fold(c: number): number {
  return c >= 65 && c <= 90 ? c | 32 : c;
}

/** Whether keyword `k` (lower-case bytes) stands at `at` of `bytes`, case folded (its first two bytes matched). */
function matchesAt(bytes: Uint8Array, at: number, k: Uint8Array): boolean {
  if (at + k.length > bytes.length) return false;
  for (let j = 2; j < k.length; j++) if (fold(bytes[at + j] as number) !== k[j]) return false;
  return true;
}

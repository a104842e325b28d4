/**
 * Where a BlobRef may stand in a stored record, by record kind: the positions whose schema is
 * `string | BlobRef` (protocol/README.md §15.4). The server stores a large string as a blob only
 * at these positions (and accepts a BlobRef or an attachment only there); every other string of a
 * record stays in the journal, whatever its size. A path is the members from the record's top
 * level, `[]` standing for every element of an array. test/protocol/blobPositions.test.ts walks
 * schema.json and fails when the positions it marks differ from this list.
 */
export const BLOB_POSITIONS = {
  message: ['message.toolCalls[].arguments'],
  interruption: ['assistantText', 'toolCalls[].arguments'],
  toolStream: ['text', 'dataBase64'],
} as const satisfies Readonly<Record<string, readonly string[]>>;

/** The positions of a record of `kind` (none for a kind not listed). */
export function blobPositionsOf(kind: unknown): readonly string[] {
  return typeof kind === 'string' && Object.hasOwn(BLOB_POSITIONS, kind) ? BLOB_POSITIONS[kind as keyof typeof BLOB_POSITIONS] : [];
}

import { PROTOCOL_VOCABULARY } from './vocabulary.generated.js';

/**
 * The protocol's fixed vocabulary: every member name, literal and enum value of every schema,
 * plus the journal's own words. A secret that occurs in it would match every record, so
 * registering one is refused.
 *
 * At run time it is the list `npm run gen:protocol` wrote into vocabulary.generated.ts (a test
 * fails when it differs from vocabularyOfSchemas.ts's `computeVocabulary()`): the binary builds
 * its schemas without their `.meta()` annotations (scripts/bundle.mjs), so it has no registry
 * to compute it from.
 */
export function protocolVocabulary(): readonly string[] {
  return PROTOCOL_VOCABULARY;
}

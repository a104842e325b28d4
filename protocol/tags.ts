import * as z from 'zod';

export const MAX_TAGS = 32;

/** A tag: `[A-Za-z0-9._:-]`, 1..128 characters. */
export const Tag = z.string().min(1).max(128).regex(/^[A-Za-z0-9._:-]+$/).meta({ id: 'Tag', description: '[A-Za-z0-9._:-]{1,128}' });
export const Tags = z.array(Tag).max(MAX_TAGS).meta({ description: `A set of at most ${MAX_TAGS} distinct tags` });

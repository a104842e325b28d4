import * as z from 'zod';

const Count = z.number().int().min(0);

/** Normalized token counts (src/domain/usage.ts says how each provider shape maps to them). */
export const UsageCounts = z
  .object({
    input: Count.meta({ description: 'All input tokens, cache reads and writes included' }),
    output: Count.meta({ description: 'All output tokens, reasoning included' }),
    cacheRead: Count.meta({ description: 'Input tokens read from the provider cache' }),
    cacheWrite: Count.meta({ description: 'Input tokens written to the provider cache' }),
    reasoning: Count.optional().meta({ description: 'Reasoning (thinking) tokens among output; present when reported' }),
    total: Count.meta({ description: "The provider's total where it gives one, else input + output" }),
    requests: Count.meta({ description: 'Usage objects counted' }),
  })
  .meta({ id: 'UsageCounts' });

/** The totals a checkpoint carries (byModel key "" = records that named no model). */
export const StoredUsageTotals = z
  .object({
    records: Count,
    total: UsageCounts,
    byModel: z.record(z.string(), UsageCounts),
  })
  .meta({ id: 'StoredUsageTotals' });

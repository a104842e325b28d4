import type { Scenario } from '../context.js';
import { cancel } from './cancel.js';
import { compaction } from './compaction.js';
import { durability } from './durability.js';
import { encryption } from './encryption.js';
import { ephemeral } from './ephemeral.js';
import { framing } from './framing.js';
import { idempotency } from './idempotency.js';
import { lifecycle } from './lifecycle.js';
import { lineage } from './lineage.js';
import { management } from './management.js';
import { records } from './records.js';
import { retention } from './retention.js';
import { repair } from './repair.js';
import { runtime } from './runtime.js';
import { secrets } from './secrets.js';
import { sessions } from './sessions.js';
import { subscribe } from './subscribe.js';
import { turns } from './turns.js';
import { usageRewind } from './usageRewind.js';

/** Every scenario of the suite, in the order they run (the order of the protocol document). */
export const SCENARIOS: readonly Scenario[] = [
  framing, lifecycle, sessions, management, records, cancel, turns, repair, compaction, lineage, subscribe, runtime, secrets, durability, idempotency, ephemeral, retention, usageRewind, encryption,
];

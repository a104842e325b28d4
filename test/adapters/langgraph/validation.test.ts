/**
 * LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation),
 * every case of it, against SidecarCheckpointSaver over the built binary. The suite is written
 * for Jest-style globals; this project's vitest does not enable them, so they are provided here.
 * `npm run validate:langgraph` runs this file alone.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import initializer from './initializer.js';

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

validate(initializer);

import type { AgentInputItem, AgentOutputItem, Model, ModelProvider, ModelRequest, ModelResponse, StreamEvent } from '@openai/agents-core';
import { Usage } from '@openai/agents-core';

/**
 * A Model of the tests' own: answers each call with the next canned output (no network) and
 * records the input of every call, so a test can assert what history the runner sent.
 */
export class CannedModel implements Model {
  readonly calls: Array<{ input: AgentInputItem[]; systemInstructions: string | undefined }> = [];
  private next = 0;

  constructor(private readonly outputs: AgentOutputItem[][]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [{ role: 'user', content: request.input } as AgentInputItem] : structuredClone(request.input);
    this.calls.push({ input, systemInstructions: request.systemInstructions });
    const output = this.outputs[this.next++];
    if (output === undefined) throw new Error(`CannedModel: no canned response left for call ${this.next}`);
    return { usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }), output: structuredClone(output), responseId: `resp_${this.next}` };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('CannedModel does not stream');
  }
}

/** A ModelProvider that hands out one CannedModel whatever the model name. */
export class CannedProvider implements ModelProvider {
  constructor(readonly model: CannedModel) {}
  getModel(): Model {
    return this.model;
  }
}

/** An assistant text answer as the Responses API gives it. */
export function say(id: string, text: string): AgentOutputItem {
  return {
    type: 'message', id, role: 'assistant', status: 'completed',
    content: [{ type: 'output_text', text, providerData: { annotations: [] } }],
  } as AgentOutputItem;
}

/** A function tool call. */
export function call(callId: string, name: string, args: unknown): AgentOutputItem {
  return { type: 'function_call', id: `fc_${callId}`, callId, name, arguments: JSON.stringify(args), status: 'completed', providerData: { origin: 'canned' } } as AgentOutputItem;
}

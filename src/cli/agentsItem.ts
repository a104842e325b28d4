/**
 * How `show` and `tail` render an OpenAI Agents SDK item: the `event` records of type
 * `agents.item` that session-sidecar/adapters/openai-agents and clients/python's SidecarSession
 * write (one item per record, payload exactly as the SDK gave it). The known item shapes are
 * shown as the chat message they are — a message with its role and text, a function call as an
 * assistant tool call, a function result as a tool message, reasoning as its text — by mapping
 * them to the `message` view the transcript already renders. Any other item (hosted tools,
 * computer calls, future shapes) stays an event line with its JSON: never hidden. Display only:
 * the stored record is not changed.
 */

/** The `type` of the event records that hold Agents SDK items. */
export const AGENTS_ITEM_TYPE = 'agents.item';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The message view of an item (role, content, tool calls/result), or undefined when it is not a known shape. */
export function agentsItemAsMessage(item: unknown): Obj | undefined {
  if (!isObj(item)) return undefined;
  const type = str(item.type);
  if ((type === undefined || type === 'message') && str(item.role)) {
    return { role: item.role, content: item.content ?? null };
  }
  if (type === 'function_call') {
    const id = str(item.callId) ?? str(item.call_id) ?? str(item.id);
    return { role: 'assistant', content: null, toolCalls: [{ ...(id ? { id } : {}), name: str(item.name) ?? '?', arguments: item.arguments ?? '' }] };
  }
  if (type === 'function_call_result' || type === 'function_call_output') {
    const id = str(item.callId) ?? str(item.call_id);
    return { role: 'tool', content: item.output ?? null, ...(id ? { toolCallId: id } : {}), ...(str(item.name) ? { name: item.name } : {}) };
  }
  if (type === 'reasoning') {
    const parts = Array.isArray(item.content) && item.content.length > 0 ? item.content : item.summary;
    return { role: 'reasoning', content: Array.isArray(parts) ? parts : null };
  }
  return undefined;
}

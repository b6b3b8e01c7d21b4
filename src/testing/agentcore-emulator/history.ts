/**
 * Server-side conversation state of the AgentCore emulator, per runtime session id, and the
 * checks the real harness (Bedrock Converse underneath) applies to the messages of an invoke:
 * - the harness does not persist an uncommitted tool-use turn, so a resume must echo the
 *   assistant `toolUse` blocks before the user `toolResult` blocks; a `toolResult` without a
 *   matching `toolUse` in the message before it is rejected ("The number of toolResult blocks …
 *   exceeds the number of toolUse blocks of previous turn");
 * - every `toolUse` of an assistant message needs a `toolResult` in the next message;
 * - duplicate ids in one message are rejected ("duplicate Ids at messages.N.content");
 * - echoed `toolUse` ids must be ones the model produced in the session's last turn.
 */

/** A Converse message as sent in `InvokeHarness` (`{role, content:[…blocks]}`). */
export type HarnessWireMessage = { readonly role: string; readonly content: readonly Readonly<Record<string, unknown>>[] };

/** What the emulator keeps per runtime session id. */
export interface EmulatedSession {
  /** Committed conversation: request messages of completed invokes plus the model's answers. */
  readonly messages: HarnessWireMessage[];
  /** Tool uses of the last completed turn that stopped with `tool_use`, awaiting their results. */
  pending: { readonly toolUseId: string; readonly name: string }[];
  /** Completed invokes. */
  turns: number;
}

/** A request rejected the way the service rejects it. */
export interface Rejection {
  /** The service's error message. */
  readonly message: string;
  /** `CannotParse` for shape errors, `FieldValidationFailed` for history errors. */
  readonly reason: 'CannotParse' | 'FieldValidationFailed';
  /** Shape errors are always HTTP 400; history errors follow the emulator's `rejectWith`. */
  readonly shape: boolean;
}

/** Checks the `messages` of an invoke against the session. Returns undefined when acceptable. */
export function validateMessages(raw: unknown, session: EmulatedSession | undefined): Rejection | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return shape('messages: must contain at least 1 item');
  const messages = raw as unknown[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isMap(m) || (m['role'] !== 'user' && m['role'] !== 'assistant')) return shape(`messages.${i}.role: must be one of [user, assistant]`);
    const content = m['content'];
    if (!Array.isArray(content) || content.length === 0) return shape(`messages.${i}.content: must contain at least 1 item`);
    for (let j = 0; j < content.length; j++) {
      const block = content[j] as unknown;
      if (!isMap(block) || Object.keys(block).length !== 1)
        return shape(`messages.${i}.content.${j}: exactly one member of the content block union must be set`);
      const use = block['toolUse'];
      if (use !== undefined && (!isMap(use) || typeof use['toolUseId'] !== 'string' || typeof use['name'] !== 'string' || !isMap(use['input']))) {
        return shape(`messages.${i}.content.${j}.toolUse: toolUseId, name and an object input are required`);
      }
      const result = block['toolResult'];
      if (result !== undefined) {
        if (!isMap(result) || typeof result['toolUseId'] !== 'string' || !Array.isArray(result['content'])) {
          return shape(`messages.${i}.content.${j}.toolResult: toolUseId and content are required`);
        }
        if (result['status'] !== undefined && result['status'] !== 'success' && result['status'] !== 'error') {
          return shape(`messages.${i}.content.${j}.toolResult.status: must be one of [success, error]`);
        }
      }
    }
  }
  const typed = messages as HarnessWireMessage[];
  for (let i = 0; i < typed.length; i++) {
    const uses = typed[i]!.content.filter((b) => isMap(b['toolUse'])).map(blockId) as string[];
    const results = typed[i]!.content.filter((b) => isMap(b['toolResult'])).map(blockId) as string[];
    if (new Set(uses).size !== uses.length || new Set(results).size !== results.length) {
      return history(`The model returned the following errors: Found duplicate Ids at messages.${i}.content`);
    }
    if (results.length > 0) {
      const prev = i > 0 ? typed[i - 1] : session?.messages.at(-1);
      const prevUses = prev && prev.role === 'assistant' ? (prev.content.filter((b) => isMap(b['toolUse'])).map(blockId) as string[]) : [];
      if (results.length > prevUses.length) {
        return history(
          `The number of toolResult blocks at messages.${i}.content exceeds the number of toolUse blocks of previous turn (${results.length} > ${prevUses.length}).`,
        );
      }
      const unknown = results.filter((id) => !prevUses.includes(id));
      if (unknown.length > 0)
        return history(`messages.${i}.content: toolResult blocks reference toolUseIds with no toolUse block in the previous turn: ${unknown.join(', ')}`);
    }
    if (uses.length > 0) {
      const next = typed[i + 1];
      const answered = next && next.role === 'user' ? (next.content.filter((b) => isMap(b['toolResult'])).map(blockId) as string[]) : [];
      const missing = uses.filter((id) => !answered.includes(id));
      if (missing.length > 0) return history(`Expected toolResult blocks at messages.${i + 1}.content for the following Ids: ${missing.join(', ')}`);
      const produced = new Set((session?.pending ?? []).map((p) => p.toolUseId));
      const foreign = uses.filter((id) => !produced.has(id));
      if (foreign.length > 0)
        return history(`messages.${i}.content: toolUse blocks with ids the model did not produce in the previous turn: ${foreign.join(', ')}`);
    }
  }
  return undefined;
}

function blockId(block: Readonly<Record<string, unknown>>): string | undefined {
  const inner = block['toolUse'] ?? block['toolResult'];
  return isMap(inner) && typeof inner['toolUseId'] === 'string' ? inner['toolUseId'] : undefined;
}

function shape(message: string): Rejection {
  return { message, reason: 'CannotParse', shape: true };
}

function history(message: string): Rejection {
  return { message, reason: 'FieldValidationFailed', shape: false };
}

/** A plain JSON object. */
export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
